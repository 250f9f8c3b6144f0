// Package workspace owns what lies on disk: the layout of a workspace
// directory, its settings, the SQLite database and its migrations, the owner
// lock, grants and tokens, and the one application error type whose codes
// every edge maps to its own wire form.
package workspace
