package com.acme;

class ParserTest {}
