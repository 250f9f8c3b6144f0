package com.acme;

class Contest {}
