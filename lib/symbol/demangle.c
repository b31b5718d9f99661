/* demangle.c — C++ symbol demangling through libstdc++'s __cxa_demangle.
 *
 * perf 6.1 prints demangled names without their function type by default
 * (libiberty's DMGL_NO_OPTS: "ns::W<long>::spin", not "...::spin(long)"),
 * and the full name with -v. __cxa_demangle always gives the full form, so
 * the short form is cut out of it: drop " [clone .x]" suffixes, trailing
 * cv/ref qualifiers, the outermost parameter list, and a template function's
 * return type. Rust legacy names get perf's Rust post-processing.
 */
#include "symbol-int.h"

#include <stdlib.h>
#include <string.h>

extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

static bool ends_with(const char *s, size_t n, const char *suf)
{
	size_t k = strlen(suf);
	return n >= k && memcmp(s + n - k, suf, k) == 0;
}

/* Length of the "operator..." token starting at s (s points at "operator"). */
static size_t operator_len(const char *s)
{
	static const char *const ops[] = {
		"operator new[]", "operator delete[]", "operator new", "operator delete",
		"operator<=>", "operator<<=", "operator>>=", "operator->*", "operator()", "operator[]",
		"operator<<", "operator>>", "operator<=", "operator>=", "operator->", "operator==",
		"operator!=", "operator&&", "operator||", "operator++", "operator--", "operator+=",
		"operator-=", "operator*=", "operator/=", "operator%=", "operator&=", "operator|=",
		"operator^=", "operator<", "operator>", "operator+", "operator-", "operator*",
		"operator/", "operator%", "operator^", "operator&", "operator|", "operator~",
		"operator!", "operator=", "operator,", "operator\"\" ",
	};
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		size_t k = strlen(ops[i]);
		if (strncmp(s, ops[i], k) == 0)
			return k;
	}
	return 8;   /* conversion operator: "operator" then a type */
}

static bool word_start(const char *base, const char *p)
{
	return p == base || p[-1] == ':' || p[-1] == ' ' || p[-1] == '(' || p[-1] == '<' || p[-1] == ',';
}

/* Cut the full demangled form down to the bare qualified name, in place. */
static void strip_function_type(char *s)
{
	size_t n = strlen(s);
	/* " [clone .cold]" suffixes (libiberty without params ignores them) */
	for (;;) {
		if (n && s[n - 1] == ']') {
			char *c = strstr(s, " [clone ");
			if (c) {
				n = (size_t)(c - s);
				s[n] = '\0';
				continue;
			}
		}
		break;
	}
	/* trailing qualifiers of a member function */
	for (bool again = true; again;) {
		again = false;
		static const char *const quals[] = { " const", " volatile", " &&", " &", " noexcept" };
		for (size_t i = 0; i < sizeof(quals) / sizeof(quals[0]); i++) {
			if (n && s[n - 1] != ')' && ends_with(s, n, quals[i])) {
				n -= strlen(quals[i]);
				s[n] = '\0';
				again = true;
			}
		}
	}
	if (!n || s[n - 1] != ')')
		return;
	/* matching '(' of the parameter list */
	int depth = 0;
	size_t i = n;
	while (i > 0) {
		char ch = s[--i];
		if (ch == ')')
			depth++;
		else if (ch == '(' && --depth == 0)
			break;
	}
	if (depth != 0 || i == 0)
		return;
	n = i;
	s[n] = '\0';
	/* return type: the last top-level space outside any operator token */
	size_t cut = 0;
	int d = 0;
	for (size_t k = 0; k < n; k++) {
		char ch = s[k];
		if (d == 0 && ch == 'o' && strncmp(s + k, "operator", 8) == 0 && word_start(s, s + k)) {
			size_t ol = operator_len(s + k);
			if (ol == 8)
				break;  /* conversion operator: the rest is its type */
			k += ol - 1;
			/* "operator< <char>": the space before an operator's
			 * template arguments is no return type's end */
			if (s[k + 1] == ' ' && s[k + 2] == '<')
				k++;
			continue;
		}
		if (ch == '(' || ch == '<' || ch == '[' || ch == '{')
			d++;
		else if ((ch == ')' || ch == '>' || ch == ']' || ch == '}') && d > 0)
			d--;
		else if (ch == ' ' && d == 0)
			cut = k + 1;
	}
	if (cut)
		memmove(s, s + cut, n - cut + 1);
}

/* Rust's legacy mangling is C++-shaped: "_ZN4core3ptr13drop_in_place
 * 17h0123456789abcdefE" demangles to "core::ptr::drop_in_place::h0123...".
 * perf then drops the "::h<16 hex>" hash and decodes the "$LT$"-style
 * escapes, "..", and "." (-> "-"). */
static bool rust_is_mangled(const char *s)
{
	size_t n = strlen(s);
	if (n < 19 || strncmp(s + n - 19, "::h", 3) != 0)
		return false;
	for (size_t i = n - 16; i < n; i++)
		if (!strchr("0123456789abcdef", s[i]))
			return false;
	/* every '$' escape must be one perf knows */
	for (const char *p = s; (p = strchr(p, '$')) != NULL;) {
		const char *e = strchr(p + 1, '$');
		if (!e || e - p > 6)
			return false;
		p = e + 1;
	}
	return true;
}

static void rust_demangle(char *s)
{
	static const struct { const char *esc, *rep; } esc[] = {
		{ "$SP$", "@" }, { "$BP$", "*" }, { "$RF$", "&" }, { "$LT$", "<" }, { "$GT$", ">" },
		{ "$LP$", "(" }, { "$RP$", ")" }, { "$C$", "," }, { "$u7e$", "~" }, { "$u20$", " " },
		{ "$u27$", "'" }, { "$u5b$", "[" }, { "$u5d$", "]" }, { "$u7b$", "{" }, { "$u7d$", "}" },
		{ "$u3b$", ";" }, { "$u2b$", "+" }, { "$u22$", "\"" },
	};
	size_t n = strlen(s) - 19;
	char *src = strndup(s, n);
	if (!src)
		return;
	char *out = s;
	const char *in = src, *end = src + n;
	while (in < end) {
		if (*in == '$') {
			size_t k;
			for (k = 0; k < sizeof(esc) / sizeof(esc[0]); k++) {
				size_t l = strlen(esc[k].esc);
				if ((size_t)(end - in) >= l && strncmp(in, esc[k].esc, l) == 0) {
					*out++ = esc[k].rep[0];
					in += l;
					break;
				}
			}
			if (k == sizeof(esc) / sizeof(esc[0]))
				*out++ = *in++;
		} else if (*in == '_' && (in == src || in[-1] == ':') && in + 1 < end && in[1] == '$') {
			in++;   /* "_" the mangler put before a component starting with an escape */
		} else if (*in == '.') {
			if (in + 1 < end && in[1] == '.') {
				*out++ = ':';
				*out++ = ':';
				in += 2;
			} else {
				*out++ = '-';
				in++;
			}
		} else {
			*out++ = *in++;
		}
	}
	*out = '\0';
	free(src);
}

char *sym_demangle(const char *name, bool with_params)
{
	int status = 0;
	char *out = __cxa_demangle(name, NULL, NULL, &status);
	if (status != 0 || !out) {
		free(out);
		return NULL;
	}
	if (rust_is_mangled(out))
		rust_demangle(out);
	else if (!with_params)
		strip_function_type(out);
	return out;
}
