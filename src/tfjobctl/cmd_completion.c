/*
 * tfjobctl completion bash|zsh|fish: print a shell completion script.
 *
 * The script is made from the same text as --help: each command's usage function is printed into
 * memory and read back (its option lines "  -x, --long ARG  description" and its usage lines), so
 * a flag a command documents is a flag its completion offers. What only this file knows is how to
 * complete the value of a flag (files, directories, a fixed list) and a command's positional
 * arguments; -o's values are the quoted words of the -o line of the help ('json', 'yaml', ...).
 * SPDX-License-Identifier: Apache-2.0
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfjobctl.h"

enum { MAX_NAMES = 4, MAX_OPTS = 64, NAME_LEN = 48, HELP_LEN = 160, WORDS_LEN = 160 };

/* How the value of a flag, or a positional argument, is completed. */
enum value_kind { VAL_NONE, VAL_FREE, VAL_FILE, VAL_DIR, VAL_WORDS };

struct opt {
	char names[MAX_NAMES][NAME_LEN]; /* "-f", "--filename" */
	size_t n_names;
	bool value;              /* takes a value */
	bool eq;                 /* written --name=VALUE: the value is given after '=' only */
	char help[HELP_LEN];     /* the first line of its description */
	char formats[WORDS_LEN]; /* -o/--output: the formats the help names, space-separated */
	bool from_usage;         /* only written in a usage line */
};

struct cmd {
	const char *name;
	const char *summary;
	struct opt opts[MAX_OPTS];
	size_t n_opts;
};

/* Flags whose values are files, directories or one of a few words, by long name. */
static const struct {
	const char *name;
	enum value_kind kind;
	const char *words;
} value_rules[] = {
	{ "--filename", VAL_FILE, NULL },
	{ "--old", VAL_FILE, NULL },
	{ "--job", VAL_FILE, NULL },
	{ "--pods", VAL_FILE, NULL },
	{ "--services", VAL_FILE, NULL },
	{ "--pod-group", VAL_FILE, NULL },
	{ "--kubeconfig", VAL_FILE, NULL },
	{ "--run-dir", VAL_DIR, NULL },
	{ "--compat", VAL_WORDS, "documented training-operator-1.9" },
	{ "--validate", VAL_WORDS, "strict warn ignore" },
	{ "--cascade", VAL_WORDS, "background foreground orphan" },
	{ "--gang-scheduler", VAL_WORDS, "volcano scheduler-plugins" },
	{ "--strict", VAL_WORDS, "true false" },
	{ "--container", VAL_WORDS, "tensorflow" },
};

/* The positional arguments of a command; files when not listed. */
static const struct {
	const char *command;
	enum value_kind kind;
	const char *words;
} positional_rules[] = {
	{ "exit-code", VAL_FREE, NULL }, /* CODE */
	{ "apply", VAL_NONE, NULL },     /* -f only */
	{ "get", VAL_FREE, NULL },       /* NAME... of the cluster */
	{ "describe", VAL_FREE, NULL },
	{ "delete", VAL_FREE, NULL },
	{ "watch", VAL_FREE, NULL },
	{ "diagnose", VAL_FREE, NULL },
	{ "logs", VAL_DIR, NULL }, /* a local run's RUN (then POD), or a cluster's JOB */
	{ "completion", VAL_WORDS, "bash zsh fish" },
};

static const char *const shells[] = { "bash", "zsh", "fish" };

void usage_completion(FILE *out)
{
	fprintf(out, "usage: tfjobctl completion [--compat C] bash|zsh|fish\n\n"
	             "Print a script that completes tfjobctl's commands, each command's flags, the values\n"
	             "of -o and of the flags that take one of a few words, and file names (after -f and\n"
	             "the flags that read a file, and for a command's FILE) in the given shell.\n\n"
	             "  bash   source it: source <(tfjobctl completion bash), or save it as\n"
	             "         /usr/share/bash-completion/completions/tfjobctl\n"
	             "  zsh    save it as _tfjobctl in a directory of $fpath (e.g.\n"
	             "         /usr/share/zsh/site-functions), then compinit picks it up\n"
	             "  fish   save it as ~/.config/fish/completions/tfjobctl.fish, or source it\n"
	             "  --compat C  'documented' or 'training-operator-1.9': accepted as by every command;\n"
	             "         the script does not depend on it\n\n"
	             "meson install puts all three where the shells look (docs/install.md).\n\n"
	             "Exit status: 0 ok, 2 usage error.\n");
}

static struct opt *find_opt(struct cmd *c, const char *name)
{
	for (size_t i = 0; i < c->n_opts; i++)
		for (size_t k = 0; k < c->opts[i].n_names; k++)
			if (!strcmp(c->opts[i].names[k], name))
				return &c->opts[i];
	return NULL;
}

static size_t token_len(const char *s)
{
	size_t n = 0;
	while (s[n] && s[n] != ' ')
		n++;
	return n;
}

/* A name of a value in the help: FILE, N, RFC3339, or a lowercase word standing alone (the
 * description follows after two spaces). */
static bool is_value_token(const char *s, size_t n)
{
	if (n == 0 || s[0] == '-' || s[0] == '(')
		return false;
	bool upper = true;
	for (size_t i = 0; i < n; i++)
		if (!(isupper((unsigned char)s[i]) || isdigit((unsigned char)s[i]) || strchr("_|,-", s[i])))
			upper = false;
	if (upper && isupper((unsigned char)s[0]))
		return true;
	return (s[n] == '\0' || (s[n] == ' ' && s[n + 1] == ' ') || s[n - 1] == ',');
}

/* Add one name (with ",", "=VALUE" stripped) to o; the '=' form marks the option. */
static void add_name(struct opt *o, const char *s, size_t n)
{
	if (n && s[n - 1] == ',')
		n--;
	const char *eq = memchr(s, '=', n);
	if (eq) {
		o->eq = true;
		o->value = true;
		n = (size_t)(eq - s);
	}
	if (o->n_names < MAX_NAMES && n > 0 && n < NAME_LEN) {
		memcpy(o->names[o->n_names], s, n);
		o->names[o->n_names][n] = '\0';
		o->n_names++;
	}
}

/* An option line of the help, after its two leading spaces: "-f, --filename F  text",
 * "--strict=BOOL   text", "--job FILE, -f FILE the TFJob". Returns where its description starts. */
static const char *parse_option_line(struct opt *o, const char *s)
{
	for (;;) {
		size_t n = token_len(s);
		add_name(o, s, n);
		bool more = n && s[n - 1] == ',';
		s += n;
		if (!more && s[0] == ' ' && s[1] != ' ' && s[1] != '\0' && is_value_token(s + 1, token_len(s + 1))) {
			s++;
			n = token_len(s);
			o->value = true;
			more = s[n - 1] == ',';
			s += n;
		}
		if (!more)
			break;
		while (*s == ' ')
			s++;
		if (*s != '-')
			break;
	}
	while (*s == ' ')
		s++;
	return s;
}

/* The quoted lowercase words of text ('json', 'yaml'), appended to words. */
static void add_quoted_words(char *words, size_t size, const char *text)
{
	for (const char *q = strchr(text, '\''); q; q = strchr(q + 1, '\'')) {
		const char *end = strchr(q + 1, '\'');
		if (!end)
			break;
		bool word = end > q + 1;
		for (const char *p = q + 1; p < end; p++)
			if (!islower((unsigned char)*p))
				word = false;
		if (word) {
			size_t len = strlen(words);
			char w[NAME_LEN];
			snprintf(w, sizeof(w), "%.*s", (int)(end - q - 1), q + 1);
			if (!strstr(words, w) && len + strlen(w) + 2 < size)
				snprintf(words + len, size - len, "%s%s", len ? " " : "", w);
		}
		q = end;
	}
}

/* The flags written in a usage line ("[--old OLD]", "[-o json|yaml]", "--run-dir DIR") that the
 * option lines do not describe. */
static void parse_usage_line(struct cmd *c, char *line)
{
	for (char *p = line; *p; p++)
		if (*p == '[' || *p == ']' || *p == '|')
			*p = ' ';
	char *save = NULL;
	for (char *tok = strtok_r(line, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		if (tok[0] != '-' || tok[1] == '\0' || !isalpha((unsigned char)tok[tok[1] == '-' ? 2 : 1]))
			continue;
		struct opt tmp = { .from_usage = true };
		add_name(&tmp, tok, strlen(tok));
		if (tmp.n_names == 0 || find_opt(c, tmp.names[0]) || c->n_opts == MAX_OPTS)
			continue;
		char *next = save && *save ? save : NULL;
		if (!tmp.eq && next && isupper((unsigned char)next[0]) && is_value_token(next, token_len(next)))
			tmp.value = true;
		c->opts[c->n_opts++] = tmp;
	}
}

/* Read a command's help text into c. */
static int parse_help(struct cmd *c, void (*usage)(FILE *))
{
	char *text = NULL;
	size_t size = 0;
	FILE *mem = open_memstream(&text, &size);
	if (!mem)
		return ctl_fail("completion: out of memory");
	usage(mem);
	if (fclose(mem) != 0 || !text) {
		free(text);
		return ctl_fail("completion: out of memory");
	}
	bool in_usage = true;
	size_t first = c->n_opts;
	struct opt *last = NULL; /* the option whose description continues */
	for (char *line = text, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (*line == '\0') {
			in_usage = false;
			last = NULL;
			continue;
		}
		if (in_usage) {
			parse_usage_line(c, line);
			continue;
		}
		if (line[0] == ' ' && line[1] == ' ' && line[2] == '-' && line[3] != ' ' && c->n_opts < MAX_OPTS) {
			struct opt o = { 0 };
			const char *help = parse_option_line(&o, line + 2);
			snprintf(o.help, sizeof(o.help), "%s", help);
			if (o.n_names == 0)
				continue;
			last = &c->opts[c->n_opts++];
			*last = o;
		} else if (!(line[0] == ' ' && last)) { /* not a continuation of a description */
			last = NULL;
			continue;
		}
		if (!strcmp(last->names[0], "-o") || !strcmp(last->names[0], "--output"))
			add_quoted_words(last->formats, sizeof(last->formats), line);
	}
	/* A flag of a usage line that an option line describes: the description's entry stays. */
	for (size_t i = first; i < c->n_opts;) {
		bool described = false;
		for (size_t j = first; c->opts[i].from_usage && j < c->n_opts && !described; j++)
			for (size_t k = 0; !c->opts[j].from_usage && k < c->opts[j].n_names; k++)
				if (!strcmp(c->opts[j].names[k], c->opts[i].names[0]))
					described = true;
		if (described)
			memmove(&c->opts[i], &c->opts[i + 1], (c->n_opts-- - i - 1) * sizeof(c->opts[0]));
		else
			i++;
	}
	free(text);
	return 0;
}

static enum value_kind value_of(const struct opt *o, const char **words)
{
	*words = NULL;
	if (!o->value)
		return VAL_NONE;
	for (size_t k = 0; k < o->n_names; k++) {
		if (!strcmp(o->names[k], "--output") || !strcmp(o->names[k], "-o")) {
			*words = o->formats;
			return VAL_WORDS;
		}
		for (size_t r = 0; r < sizeof(value_rules) / sizeof(value_rules[0]); r++)
			if (!strcmp(o->names[k], value_rules[r].name)) {
				*words = value_rules[r].words;
				return value_rules[r].kind;
			}
	}
	return VAL_FREE;
}

static enum value_kind positional_of(const char *command, const char **words)
{
	*words = NULL;
	for (size_t r = 0; r < sizeof(positional_rules) / sizeof(positional_rules[0]); r++)
		if (!strcmp(command, positional_rules[r].command)) {
			*words = positional_rules[r].words;
			return positional_rules[r].kind;
		}
	return VAL_FILE;
}

/* ---- bash ---- */

static void bash_value_case(FILE *out, const char *pattern, enum value_kind kind, const char *words)
{
	switch (kind) {
	case VAL_FILE:
		fprintf(out, "                %s) _tfjobctl_files; return ;;\n", pattern);
		break;
	case VAL_DIR:
		fprintf(out, "                %s) _tfjobctl_dirs; return ;;\n", pattern);
		break;
	case VAL_WORDS:
		fprintf(out, "                %s) _tfjobctl_words '%s'; return ;;\n", pattern, words ? words : "");
		break;
	case VAL_FREE:
		fprintf(out, "                %s) return ;;\n", pattern);
		break;
	case VAL_NONE:
		break;
	}
}

/* The case of one command in _tfjobctl: its flags, its positional arguments, its flags' values. */
static void bash_command_case(FILE *out, const struct cmd *c)
{
	fprintf(out, "        %s)\n            opts='", c->name);
	for (size_t o = 0; o < c->n_opts; o++)
		for (size_t k = 0; k < c->opts[o].n_names; k++)
			fprintf(out, "%s%s ", c->opts[o].names[k], c->opts[o].eq ? "=" : "");
	fprintf(out, "--help'\n");
	const char *words;
	enum value_kind pos = positional_of(c->name, &words);
	fprintf(out, "            positional=%s\n",
	        pos == VAL_FILE ? "files" : pos == VAL_DIR ? "dirs" : pos == VAL_WORDS ? "words" : "none");
	if (words)
		fprintf(out, "            words='%s'\n", words);
	fprintf(out, "            case $flag in\n");
	for (size_t o = 0; o < c->n_opts; o++) {
		const struct opt *opt = &c->opts[o];
		enum value_kind kind = value_of(opt, &words);
		if (kind == VAL_NONE)
			continue;
		char pattern[MAX_NAMES * (NAME_LEN + 1)] = "";
		for (size_t k = 0; k < opt->n_names; k++)
			snprintf(pattern + strlen(pattern), sizeof(pattern) - strlen(pattern), "%s%s", k ? "|" : "",
			         opt->names[k]);
		bash_value_case(out, pattern, kind, words);
	}
	fprintf(out, "            esac\n            ;;\n");
}

static void print_bash(FILE *out, const struct cmd *cmds, size_t n)
{
	fprintf(out, "# bash completion for tfjobctl (made by 'tfjobctl completion bash'; libtfjob %s)\n"
	             "\n"
	             "_tfjobctl_words() {\n"
	             "    local w\n"
	             "    COMPREPLY=()\n"
	             "    for w in $1; do\n"
	             "        [[ $w == \"$cur\"* ]] && COMPREPLY+=(\"$w\")\n"
	             "    done\n"
	             "    # a flag written --name= takes its value after the '='\n"
	             "    if [[ ${#COMPREPLY[@]} -eq 1 && ${COMPREPLY[0]} == *= ]]; then\n"
	             "        compopt -o nospace 2>/dev/null\n"
	             "    fi\n"
	             "    return 0\n"
	             "}\n"
	             "\n"
	             "_tfjobctl_files() {\n"
	             "    compopt -o filenames 2>/dev/null\n"
	             "    mapfile -t COMPREPLY < <(compgen -f -- \"$cur\")\n"
	             "}\n"
	             "\n"
	             "_tfjobctl_dirs() {\n"
	             "    compopt -o filenames 2>/dev/null\n"
	             "    mapfile -t COMPREPLY < <(compgen -d -- \"$cur\")\n"
	             "}\n"
	             "\n"
	             "_tfjobctl() {\n"
	             "    local cur=${COMP_WORDS[COMP_CWORD]} prev=\n"
	             "    ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD-1]}\n"
	             "    COMPREPLY=()\n"
	             "    if ((COMP_CWORD <= 1)); then\n"
	             "        _tfjobctl_words '",
	        TFJOB_VERSION);
	for (size_t i = 0; i < n; i++)
		fprintf(out, "%s ", cmds[i].name);
	fprintf(out, "help --help --version'\n"
	             "        return 0\n"
	             "    fi\n"
	             "    # the flag whose value is completed: --flag VALUE, or --flag=VALUE (bash splits at '=')\n"
	             "    local flag=$prev\n"
	             "    if [[ $cur == = ]]; then\n"
	             "        cur=\n"
	             "    elif [[ $prev == = ]] && ((COMP_CWORD > 2)); then\n"
	             "        flag=${COMP_WORDS[COMP_CWORD-2]}\n"
	             "    elif [[ $cur == --*=* ]]; then\n"
	             "        flag=${cur%%%%=*}\n"
	             "        cur=${cur#*=}\n"
	             "    elif [[ $prev == -* && $prev != *=* ]]; then\n"
	             "        flag=$prev\n"
	             "    else\n"
	             "        flag=\n"
	             "    fi\n"
	             "    local opts= positional=files words=\n"
	             "    case ${COMP_WORDS[1]} in\n");
	for (size_t i = 0; i < n; i++)
		bash_command_case(out, &cmds[i]);
	fprintf(out, "        *) return 0 ;;\n"
	             "    esac\n"
	             "    if [[ $cur == -* ]]; then\n"
	             "        _tfjobctl_words \"$opts\"\n"
	             "        return 0\n"
	             "    fi\n"
	             "    case $positional in\n"
	             "        files) _tfjobctl_files ;;\n"
	             "        dirs) _tfjobctl_dirs ;;\n"
	             "        words) _tfjobctl_words \"$words\" ;;\n"
	             "    esac\n"
	             "    return 0\n"
	             "}\n"
	             "\n"
	             "complete -F _tfjobctl tfjobctl\n");
}

/* ---- zsh ---- */

/* text for a zsh single-quoted _arguments description: [ ] : \ escaped, ' closed and reopened. */
static void zsh_text(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '\'')
			fputs("'\\''", out);
		else if (strchr("[]:\\", *s))
			fprintf(out, "\\%c", *s);
		else
			fputc(*s, out);
	}
}

static void zsh_action(FILE *out, enum value_kind kind, const char *words)
{
	switch (kind) {
	case VAL_FILE:
		fputs(":file:_files", out);
		break;
	case VAL_DIR:
		fputs(":directory:_files -/", out);
		break;
	case VAL_WORDS:
		fprintf(out, ":value:(%s)", words ? words : "");
		break;
	case VAL_FREE:
		fputs(":value: ", out);
		break;
	case VAL_NONE:
		break;
	}
}

static void print_zsh(FILE *out, const struct cmd *cmds, size_t n)
{
	fprintf(out, "#compdef tfjobctl\n"
	             "# zsh completion for tfjobctl (made by 'tfjobctl completion zsh'; libtfjob %s)\n"
	             "\n"
	             "_tfjobctl() {\n"
	             "    local -a commands\n"
	             "    commands=(\n",
	        TFJOB_VERSION);
	for (size_t i = 0; i < n; i++) {
		fprintf(out, "        '%s:", cmds[i].name);
		zsh_text(out, cmds[i].summary);
		fprintf(out, "'\n");
	}
	fprintf(out, "    )\n"
	             "    if (( CURRENT == 2 )); then\n"
	             "        _describe -t commands 'tfjobctl command' commands\n"
	             "        return\n"
	             "    fi\n"
	             "    local cmd=${words[2]}\n"
	             "    curcontext=\"${curcontext%%:*:*}:tfjobctl-$cmd:\"\n"
	             "    shift words\n"
	             "    (( CURRENT-- ))\n"
	             "    case $cmd in\n");
	for (size_t i = 0; i < n; i++) {
		const struct cmd *c = &cmds[i];
		fprintf(out, "    (%s)\n        _arguments -s -S \\\n", c->name);
		for (size_t o = 0; o < c->n_opts; o++) {
			const struct opt *opt = &c->opts[o];
			const char *words;
			enum value_kind kind = value_of(opt, &words);
			bool repeat = false;
			for (size_t k = 0; k < opt->n_names; k++)
				if (!strcmp(opt->names[k], "--filename"))
					repeat = true;
			for (size_t k = 0; k < opt->n_names; k++) {
				fputs("            '", out);
				if (repeat) {
					fputc('*', out);
				} else if (opt->n_names > 1) {
					fputc('(', out);
					for (size_t j = 0; j < opt->n_names; j++)
						fprintf(out, "%s%s", j ? " " : "", opt->names[j]);
					fputc(')', out);
				}
				fprintf(out, "%s%s[", opt->names[k], opt->eq ? "=" : "");
				zsh_text(out, opt->help);
				fputc(']', out);
				zsh_action(out, kind, words);
				fputs("' \\\n", out);
			}
		}
		fputs("            '(- *)--help[print the command'\\''s help]' \\\n", out);
		const char *words;
		enum value_kind pos = positional_of(c->name, &words);
		if (pos == VAL_WORDS)
			fprintf(out, "            '1:shell:(%s)'\n", words);
		else if (pos == VAL_FILE)
			fputs("            '*:file:_files'\n", out);
		else if (pos == VAL_DIR)
			fputs("            '1:run directory:_files -/' '*:pod: '\n", out);
		else if (pos == VAL_FREE)
			fputs("            '*:argument: '\n", out);
		else
			fputs("\n", out);
		fputs("        ;;\n", out);
	}
	fprintf(out, "    esac\n"
	             "}\n"
	             "\n"
	             "if [[ $zsh_eval_context[-1] == loadautofunc ]]; then\n"
	             "    _tfjobctl \"$@\"\n"
	             "else\n"
	             "    compdef _tfjobctl tfjobctl\n"
	             "fi\n");
}

/* ---- fish ---- */

/* text for a fish single-quoted string: \ and ' escaped. */
static void fish_text(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '\'' || *s == '\\')
			fputc('\\', out);
		fputc(*s, out);
	}
}

static void print_fish(FILE *out, const struct cmd *cmds, size_t n)
{
	fprintf(out, "# fish completion for tfjobctl (made by 'tfjobctl completion fish'; libtfjob %s)\n"
	             "complete -c tfjobctl -f\n"
	             "complete -c tfjobctl -n __fish_use_subcommand -l help -d 'print the commands'\n"
	             "complete -c tfjobctl -n __fish_use_subcommand -l version -d 'print the version'\n",
	        TFJOB_VERSION);
	for (size_t i = 0; i < n; i++) {
		fprintf(out, "complete -c tfjobctl -n __fish_use_subcommand -a %s -d '", cmds[i].name);
		fish_text(out, cmds[i].summary);
		fprintf(out, "'\n");
	}
	for (size_t i = 0; i < n; i++) {
		const struct cmd *c = &cmds[i];
		fprintf(out, "\n# %s\n", c->name);
		for (size_t o = 0; o < c->n_opts; o++) {
			const struct opt *opt = &c->opts[o];
			const char *words;
			enum value_kind kind = value_of(opt, &words);
			fprintf(out, "complete -c tfjobctl -n '__fish_seen_subcommand_from %s'", c->name);
			for (size_t k = 0; k < opt->n_names; k++) {
				const char *name = opt->names[k];
				if (name[1] == '-')
					fprintf(out, " -l %s", name + 2);
				else if (strlen(name) == 2)
					fprintf(out, " -s %s", name + 1);
				else
					fprintf(out, " -o %s", name + 1);
			}
			if (kind == VAL_FILE)
				fputs(" -r -F", out);
			else if (kind == VAL_DIR)
				fputs(" -x -a '(__fish_complete_directories)'", out);
			else if (kind == VAL_WORDS)
				fprintf(out, " -x -a '%s'", words ? words : "");
			else if (kind == VAL_FREE)
				fputs(" -x", out);
			fputs(" -d '", out);
			fish_text(out, opt->help);
			fputs("'\n", out);
		}
		fprintf(out, "complete -c tfjobctl -n '__fish_seen_subcommand_from %s' -l help -d 'print the command'\\''s help'\n",
		        c->name);
		const char *words;
		enum value_kind pos = positional_of(c->name, &words);
		if (pos == VAL_FILE)
			fprintf(out, "complete -c tfjobctl -n '__fish_seen_subcommand_from %s' -F\n", c->name);
		else if (pos == VAL_DIR)
			fprintf(out, "complete -c tfjobctl -n '__fish_seen_subcommand_from %s' -a '(__fish_complete_directories)'\n",
			        c->name);
		else if (pos == VAL_WORDS)
			fprintf(out, "complete -c tfjobctl -n '__fish_seen_subcommand_from %s' -a '%s'\n", c->name, words);
	}
}

int cmd_completion(int argc, char **argv)
{
	const char *shell_name = NULL;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--compat") || !strncmp(a, "--compat=", 9)) {
			tfjob_compat compat;
			const char *v = a[8] == '=' ? a + 9 : (i + 1 < argc ? argv[++i] : NULL);
			if (!v)
				return ctl_fail("completion: option '--compat' needs a value");
			if (!ctl_parse_compat(&compat, v))
				return EXIT_USAGE;
		} else if (a[0] == '-' && a[1] != '\0') {
			return ctl_fail("completion: unknown option '%s' (see tfjobctl completion --help)", a);
		} else if (shell_name) {
			return ctl_fail("completion: expected one shell: bash, zsh or fish (see tfjobctl completion --help)");
		} else {
			shell_name = a;
		}
	}
	if (!shell_name)
		return ctl_fail("completion: expected one shell: bash, zsh or fish (see tfjobctl completion --help)");
	size_t shell = 0;
	while (shell < sizeof(shells) / sizeof(shells[0]) && strcmp(shell_name, shells[shell]))
		shell++;
	if (shell == sizeof(shells) / sizeof(shells[0]))
		return ctl_fail("completion: unknown shell '%s' (expected bash, zsh or fish)", shell_name);
	struct cmd *cmds = calloc(ctl_command_count, sizeof(*cmds));
	if (!cmds)
		return ctl_fail("completion: out of memory");
	for (size_t i = 0; i < ctl_command_count; i++) {
		cmds[i].name = ctl_commands[i].name;
		cmds[i].summary = ctl_commands[i].summary;
		int rc = parse_help(&cmds[i], ctl_commands[i].usage);
		if (rc == 0 && ctl_commands[i].run == cmd_get) /* its second form, a local run */
			rc = parse_help(&cmds[i], usage_get_run_dir);
		if (rc != 0) {
			free(cmds);
			return rc;
		}
	}
	if (shell == 0)
		print_bash(stdout, cmds, ctl_command_count);
	else if (shell == 1)
		print_zsh(stdout, cmds, ctl_command_count);
	else
		print_fish(stdout, cmds, ctl_command_count);
	free(cmds);
	if (fflush(stdout) != 0 || ferror(stdout))
		return ctl_fail("completion: cannot write the script");
	return EXIT_OK;
}
