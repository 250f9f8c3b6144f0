package com.acme;

class TestUtil {}
