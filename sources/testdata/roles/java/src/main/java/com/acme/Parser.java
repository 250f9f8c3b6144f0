package com.acme;

public class Parser {}
