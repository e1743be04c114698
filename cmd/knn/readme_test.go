package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// readmeBlock is a fenced block of README.md that follows a
// "<!-- readme-test -->" line (a shell script to run), and the block after
// "<!-- readme-test: output -->" that shows what it prints, if any.
type readmeBlock struct {
	line   int
	script string
	output *string
}

// readmeBlocks parses README.md's marked blocks: marked scripts in order,
// each with the output block that follows it, if marked.
func readmeBlocks(t *testing.T, path, marker string) []readmeBlock {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var blocks []readmeBlock
	sc := bufio.NewScanner(f)
	n, mark := 0, ""
	for sc.Scan() {
		n++
		line := sc.Text()
		if m := regexp.MustCompile(`^<!-- (readme-test(: [a-z-]+)?) -->$`).FindStringSubmatch(line); m != nil {
			mark = m[1]
			continue
		}
		if !strings.HasPrefix(line, "```") || mark == "" {
			if strings.TrimSpace(line) != "" {
				mark = ""
			}
			continue
		}
		start := n
		var body strings.Builder
		for sc.Scan() {
			n++
			if sc.Text() == "```" {
				break
			}
			body.WriteString(sc.Text() + "\n")
		}
		switch mark {
		case marker:
			blocks = append(blocks, readmeBlock{line: start, script: body.String()})
		case "readme-test: output":
			if len(blocks) > 0 && marker == "readme-test" {
				out := body.String()
				blocks[len(blocks)-1].output = &out
			}
		}
		mark = ""
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return blocks
}

// normaliseOutput blanks what varies between machines and runs: times, the
// engine line (which names the cores or GPUs), the validation's largest
// rounding error.
func normaliseOutput(s string) string {
	for _, r := range []struct{ re, with string }{
		{`(?m)^on: .*$`, "on: ENGINE"},
		{`\d+(\.\d+)? s\b`, "T s"},
		{`max distance error \d+\.\d+ m`, "max distance error E m"},
		{`[ \t]+`, " "},
	} {
		s = regexp.MustCompile(r.re).ReplaceAllString(s, r.with)
	}
	return strings.TrimSpace(s)
}

// The README's runnable shell blocks run as printed, in order, in one
// shell (the quick start's cd holds for the blocks after it), with knn
// built from this tree first on PATH; where the README shows a block's
// output, the block prints it (times and machine details aside). So the
// README cannot drift from what knn does.
func TestReadmeCommands(t *testing.T) {
	bin := knnBinary(t)
	blocks := readmeBlocks(t, "../../README.md", "readme-test")
	if len(blocks) < 5 {
		t.Fatalf("README.md has %d blocks marked <!-- readme-test -->", len(blocks))
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	// The quick start's fixed folder becomes this test's own, so that
	// tests running side by side share nothing.
	demo := filepath.Join(t.TempDir(), "knn-demo")
	env := append(os.Environ(), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"), "HOME="+t.TempDir())
	state := filepath.Join(t.TempDir(), "cwd")
	cwd := root
	for _, b := range blocks {
		script := strings.ReplaceAll(b.script, "/tmp/knn-demo", demo)
		// set -e: a failing command fails the block; no pipefail, since
		// head closing a pipe early is what the README means.
		cmd := exec.Command("bash", "-c", "set -e\n"+script+"\npwd > "+state)
		cmd.Dir, cmd.Env = cwd, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("README.md line %d:\n%s\nfailed: %v\n%s", b.line, b.script, err, out)
		}
		if b.output != nil && normaliseOutput(string(out)) != normaliseOutput(*b.output) {
			t.Errorf("README.md line %d:\n%s\nprints:\n%s\nthe README shows:\n%s", b.line, b.script, out, *b.output)
		}
		if wd, err := os.ReadFile(state); err == nil {
			cwd = strings.TrimSpace(string(wd))
		}
	}
}

// Every flag a README command line uses is one knn defines: a renamed flag
// fails here before a user meets it (the blocks above run only some).
func TestReadmeFlagsExist(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var f runFlags
	fs := f.flagSet(nil)
	cmdLine := regexp.MustCompile("knn run [^`\n|]*")
	flagRe := regexp.MustCompile(`(?:^|\s)--?([a-z][a-z0-9-]*)`)
	for _, line := range cmdLine.FindAllString(string(b), -1) {
		for _, m := range flagRe.FindAllStringSubmatch(line, -1) {
			if fs.Lookup(m[1]) == nil && m[1] != "help" {
				t.Errorf("README.md: %q uses --%s, which knn run does not define", line, m[1])
			}
		}
	}
}
