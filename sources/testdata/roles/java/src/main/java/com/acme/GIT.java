package com.acme;

class GIT {}
