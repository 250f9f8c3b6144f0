package testenv
