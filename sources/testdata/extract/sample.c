/*
 * A sample C file.
 */
#include <stdio.h>
#include "sample.h"

#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define NAME "sample { }"

typedef struct {
    int x;
    int y;
} point_t;

static int counter = 0;

/* Adds two numbers. */
static int
add(int a, int b)
{
    return a + b;
}

int main(int argc, char **argv)
{
    char c = '{';
    const char *s = "}}";
    printf("%d %c %s\n", MAX(add(1, 2), 3), c, s);
    return 0;
}

enum color { RED, GREEN, BLUE };
