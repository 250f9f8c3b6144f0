package query

// stopwords are English function words and question words, dropped from
// the free text of a question (never from a quoted phrase). The list is
// close to the common NLTK/Snowball English lists, without words that carry
// meaning in code ("new", "not", "null", "true", "false", "set", "get",
// "make", "can", "do").
var stopwords = func() map[string]struct{} {
	m := map[string]struct{}{}
	for _, w := range []string{
		"a", "about", "above", "after", "again", "against", "all", "am", "an", "and", "any", "are",
		"as", "at", "be", "because", "been", "before", "being", "below", "between", "both", "but",
		"by", "could", "did", "does", "doing", "down", "during", "each", "few", "for", "from",
		"further", "had", "has", "have", "having", "he", "her", "here", "hers", "herself", "him",
		"himself", "his", "how", "i", "if", "in", "into", "is", "it", "its", "itself", "just", "me",
		"more", "most", "my", "myself", "no", "nor", "of", "off", "on", "once", "only", "or",
		"other", "ought", "our", "ours", "ourselves", "out", "over", "own", "same", "she", "should",
		"so", "some", "such", "than", "that", "the", "their", "theirs", "them", "themselves", "then",
		"there", "these", "they", "this", "those", "through", "to", "too", "under", "until", "up",
		"very", "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom", "why",
		"will", "with", "would", "you", "your", "yours", "yourself", "yourselves", "s", "t", "d",
		"ll", "m", "re", "ve", "don", "doesn", "didn", "isn", "aren", "wasn", "weren", "won",
		"also", "whether", "within", "without", "upon", "via", "us", "may", "might", "must", "shall",
	} {
		m[w] = struct{}{}
	}
	return m
}()

// isStopword reports whether the folded token w is a stop word.
func isStopword(w string) bool {
	_, ok := stopwords[w]
	return ok
}
