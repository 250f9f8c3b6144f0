package com.acme;

class Latest {}
