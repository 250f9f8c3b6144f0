package com.acme;

class ParserIT {}
