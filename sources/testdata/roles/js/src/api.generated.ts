export type A = string
