package com.example.sample;

import java.util.List;
import java.util.ArrayList;

/**
 * A sample class.
 */
public class Sample
{
    private final List<String> items = new ArrayList<>();

    @Override
    public String toString() {
        return "Sample{" + items + "}";
    }

    public void add(String item) {
        if (item == null) {
            throw new IllegalArgumentException("null");
        }
        items.add(item);
    }

    static int count(char c) {
        return c == '}' ? 1 : 0;
    }
}

interface Named {
    String name();
}
