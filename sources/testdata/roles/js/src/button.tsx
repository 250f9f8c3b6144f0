export function Button() { return null }
