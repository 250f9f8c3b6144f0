#!/usr/bin/env node
import { readFile } from "fs/promises";
import * as path from "path";
const util = require("util");

/** A shape. */
export interface Shape {
  area(): number;
}

export const PI = 3.14;
const re = /[{}]/g;

@Component({
  selector: "app",
})
export class Circle implements Shape {
  constructor(private r: number) {}

  area(): number {
    const s = `template ${this.r} {`;
    return PI * this.r * this.r;
  }
}

export async function load(p: string): Promise<string> {
  return readFile(path.join(".", p), "utf8")
    .then((s) => s.trim());
}

const add = (a: number, b: number): number =>
  a + b;

describe("Circle", () => {
  it("has an area", () => {
    expect(new Circle(1).area()).toBeGreaterThan(3);
  });
});
