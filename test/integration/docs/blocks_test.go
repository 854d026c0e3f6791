package docs

import (
	"bufio"
	"bytes"
	"regexp"
	"strings"
)

// blockKey names a block: its page and its first line, as the page spells it.
type blockKey struct {
	page, firstLine string
}

// command is one command a user types, as a page shows it.
type command struct {
	block blockKey
	// line is the command's first line on the page, counted from 1.
	line int
	// text is what is run: the command with its continuation lines.
	text string
	// shown is the output a console block shows after the command.
	shown []string
	// wantFail is true when the shown output has a line `error: …`: the page shows it failing.
	wantFail bool
}

// extract lists the commands of a page's user-typed blocks, in page order: every line of a
// ```sh, ```bash or ```shell block but comments (a line ending in \ goes on on the next), and the
// `$ ` lines of a ```console block or of a block without a language, each with the output shown
// below it. Blocks of other languages (yaml…) are not typed, but a YAML block that the line before
// it introduces as "A file `NAME` …:" is returned among files, by NAME, for the commands to read.
func extract(page string, src []byte) ([]command, map[string]string) {
	var cmds []command
	files := map[string]string{}
	var (
		inBlock, script, console bool
		key                      blockKey
		cur                      *command
		// file is the name of the file the YAML block being read is, by the line before it.
		file, prose string
	)
	flush := func() {
		if cur != nil {
			cur.wantFail = shownFailing(cur.shown)
			cmds = append(cmds, *cur)
			cur = nil
		}
	}
	sc := bufio.NewScanner(bytes.NewReader(src))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if !inBlock {
			if lang, ok := strings.CutPrefix(trimmed, "```"); ok {
				inBlock, key = true, blockKey{page: page}
				lang = strings.TrimSpace(lang)
				if m := fileIntro.FindStringSubmatch(prose); m != nil && lang == "yaml" {
					file = m[1]
				}
				script = lang == "sh" || lang == "bash" || lang == "shell"
				console = lang == "console" || lang == ""
			}
			if trimmed != "" {
				prose = trimmed
			}
			continue
		}
		if trimmed == "```" {
			flush()
			inBlock, script, console, file, prose = false, false, false, "", ""
			continue
		}
		if file != "" {
			files[file] += line + "\n"
		}
		if key.firstLine == "" && trimmed != "" {
			key.firstLine = trimmed
		}
		switch {
		case cur != nil && strings.HasSuffix(cur.text, `\`):
			cur.text += "\n" + line
		case script:
			flush()
			if trimmed != "" && !strings.HasPrefix(trimmed, "#") {
				cur = &command{block: key, line: n, text: line}
			}
		case console && strings.HasPrefix(line, "$ "):
			flush()
			cur = &command{block: key, line: n, text: strings.TrimPrefix(line, "$ ")}
		case console && cur != nil:
			cur.shown = append(cur.shown, line)
		}
	}
	flush()
	return cmds, files
}

// fileIntro is the line before a YAML block that the commands below it read as a file: "A file
// `change.yaml` that …:".
var fileIntro = regexp.MustCompile("^A file `([\\w.-]+)`.*:$")

// shownFailing says whether shown output is a failure's: a line `error: …`, as kubectl and
// kubectl queue print one before exiting 1, or kubectl's `Error from server …`.
func shownFailing(shown []string) bool {
	for _, l := range shown {
		if strings.HasPrefix(l, "error:") || strings.HasPrefix(l, "Error from server") {
			return true
		}
	}
	return false
}

var (
	// timestamps, durations and ages, and the suffixes of generated names change from run to run.
	timestamps = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`)
	durations  = regexp.MustCompile(`\b\d+(\.\d+)?(ms|s|m|h|d)(\d+(ms|s|m|h))*\b`)
	generated  = regexp.MustCompile(`-[bcdfghjklmnpqrstvwxz2456789]{5}\b`)
)

// normalize collapses a line's spaces (a table's padding follows its values' widths) and hides
// what changes from run to run.
func normalize(line string) string {
	line = timestamps.ReplaceAllString(line, "<time>")
	line = durations.ReplaceAllString(line, "<duration>")
	line = generated.ReplaceAllString(line, "-<generated>")
	return strings.Join(strings.Fields(line), " ")
}

// keyLine is the first non-empty line of the shown output: a table's header, or the command's
// first message. Rows below it hold ages and figures of the cluster the page was written on.
func keyLine(shown []string) string {
	for _, l := range shown {
		if strings.TrimSpace(l) != "" {
			return l
		}
	}
	return ""
}

// printed says whether out has the line want, spaces and what changes from run to run aside.
func printed(out, want string) bool {
	want = normalize(want)
	for _, l := range strings.Split(out, "\n") {
		if normalize(l) == want {
			return true
		}
	}
	return false
}
