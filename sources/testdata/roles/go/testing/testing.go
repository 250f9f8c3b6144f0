package testing
