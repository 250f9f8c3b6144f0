package sources

import (
	"strings"
	"unicode/utf8"
)

// title names a statement by its declaration line: the line up to its
// parameters, body or value ("func (s *Server) Start", "class Foo",
// "pub fn new", "const X"), white space collapsed, at most titleMax runes.
func (c *codeScan) title(st stmt) string {
	if st.decl < 0 {
		return "comments"
	}
	line := c.lines[st.decl]
	if c.lang.fam == famBrace && !strings.ContainsAny(line, "({=;#") {
		// "static int" above "add(int a, int b)": name it by both lines.
		if k := c.nextCode(st.decl+1, st.to); k > 0 && c.info[k].startDepth == c.info[st.decl].startDepth && c.info[k].first != '{' && !c.directive(k) {
			line = strings.TrimSpace(line) + " " + strings.TrimSpace(c.lines[k])
		}
	}
	t := declTitle(c.language, c.lang, line)
	if strings.HasPrefix(t, "typedef") && st.lastCode > st.decl {
		// typedef struct { ... } name;
		last := strings.TrimSpace(c.lines[st.lastCode])
		if strings.HasPrefix(last, "}") {
			if name := strings.Trim(strings.TrimSpace(last[1:]), " ;\r"); name != "" {
				t += " " + name
			}
		}
	}
	return t
}

// declTitle names a declaration line.
func declTitle(language string, lang *codeLang, line string) string {
	s := collapseSpace(strings.TrimSpace(strings.TrimPrefix(line, bom)))
	if s == "" {
		return ""
	}
	if language == LangGo && strings.HasPrefix(s, "func ") {
		return clip(goFuncTitle(s))
	}
	if s[0] == '#' && lang.preproc {
		f := strings.Fields(s)
		if len(f) >= 2 && f[0] == "#" { // "# define X"
			f = append([]string{"#" + f[1]}, f[2:]...)
		}
		if len(f) >= 2 {
			name := f[1]
			if i := strings.IndexByte(name, '('); i > 0 {
				name = name[:i]
			}
			return clip(f[0] + " " + name)
		}
		return clip(s)
	}
	cut := len(s)
	suffix := ""
scan:
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			if i == 0 || lang.noParenTitle {
				continue
			}
			if language == LangRust && (i == 3 || i > 3 && s[i-4] == ' ') && s[i-3:i] == "pub" {
				// pub(crate) enum ErrorCode: a visibility, not parameters.
				if j := strings.IndexByte(s[i:], ')'); j > 0 {
					i += j
					continue
				}
			}
			cut = i
			rest := strings.TrimSpace(s[i+1:])
			switch {
			case rest == "" && language == LangGo:
				suffix = " (…)" // var ( ... ), const ( ... )
			case strings.HasPrefix(rest, ")") && lang.fam == famShell:
				suffix = "()"
			case rest != "" && (rest[0] == '"' || rest[0] == '\'' || rest[0] == '`'):
				// describe("parser", ...): keep the name it is called with.
				if j := strings.IndexByte(rest[1:], rest[0]); j >= 0 && j < 60 {
					suffix = "(" + rest[:j+2] + ")"
				}
			}
			break scan
		case '{', ';':
			cut = i
			break scan
		case '=':
			next := byte(0)
			if i+1 < len(s) {
				next = s[i+1]
			}
			prev := byte(0)
			if i > 0 {
				prev = s[i-1]
			}
			if next == '=' || next == '>' || prev == '=' || prev == '!' || prev == '<' || prev == '>' {
				continue
			}
			cut = i
			if prev == ':' || prev == '?' || prev == '+' {
				cut = i - 1
			}
			break scan
		}
	}
	t := strings.TrimSpace(s[:cut])
	t = strings.TrimSpace(strings.TrimSuffix(t, ":"))
	t = strings.TrimSuffix(t, " do")
	t = strings.TrimSuffix(t, " where")
	t = strings.TrimLeft(t, "(")
	if t == "" {
		t = strings.TrimLeft(s, "({[ ")
	}
	return clip(t + suffix)
}

// goFuncTitle cuts "func (r *T) Name[P any](args) ..." to "func (r *T) Name".
func goFuncTitle(s string) string {
	i := len("func ")
	if i < len(s) && s[i] == '(' {
		depth := 0
		for ; i < len(s); i++ {
			if s[i] == '(' {
				depth++
			} else if s[i] == ')' {
				depth--
				if depth == 0 {
					i++
					break
				}
			}
		}
	}
	for ; i < len(s); i++ {
		if s[i] == '(' && i > len("func ") && s[i-1] != ' ' || s[i] == '[' || s[i] == '{' {
			break
		}
	}
	return strings.TrimSpace(s[:i])
}

// collapseSpace turns runs of white space into single spaces.
func collapseSpace(s string) string {
	if !strings.ContainsAny(s, "\t\r\n\v\f") && !strings.Contains(s, "  ") {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}

// clip shortens s to titleMax runes, ending it with "…" when cut.
func clip(s string) string { return clipTo(s, titleMax) }

// clipTo shortens s to max runes, ending it with "…" when cut.
func clipTo(s string, max int) string {
	if len(s) <= max || utf8.RuneCountInString(s) <= max {
		return s
	}
	n := 0
	for i := range s {
		if n == max-1 {
			return s[:i] + "…"
		}
		n++
	}
	return s
}
