#!/bin/sh
# SPDX-License-Identifier: MIT
# Writes the proxima(1) man page to standard output from the --help texts
# of the binary given, so the page cannot drift from the commands.
# Usage: sh scripts/man.sh PROXIMA VERSION
set -eu
bin=$1
version=$2

# troff-safe text: backslashes doubled, a leading '.' or "'" escaped
esc() {
	sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"
}

cat <<HEAD
.TH PROXIMA 1 "" "proxima $version" "User Commands"
.SH NAME
proxima \\- agent-based 3D question-answer data engine for egocentric recordings
.SH SYNOPSIS
.B proxima
.I command
.RI [ options ]
.SH DESCRIPTION
Proxima reads egocentric recordings with 3D metadata (camera poses, eye gaze,
3D object boxes, actions) and generates multiple-choice spatial questions:
where the wearer will look, how to turn or walk to reach something, what they
will touch next and where, and the order and directions of their next actions.
An LLM brain (the embedded local planner by default) plans each question
through tool calls; native tools compute every number; the engine adds
discretised answers and hard negatives, checks them and stores them in SQLite
for review, export and scoring.
.SH COMMANDS
HEAD
"$bin" help | sed -n 's/^  \([a-z][a-z-]*\)  *\(.*\)$/\1\t\2/p' | while IFS="$(printf '\t')" read -r name summary; do
	printf '.TP\n.B %s\n%s\n' "$name" "$(printf '%s' "$summary" | esc)"
done
"$bin" help | sed -n 's/^  \([a-z][a-z-]*\)  .*$/\1/p' | while read -r name; do
	printf '.SS "proxima %s"\n.nf\n' "$name"
	"$bin" "$name" --help 2>&1 | esc
	printf '.fi\n'
done
cat <<'TAIL'
.SH EXIT STATUS
0 on success, 1 on failure (including a generate run with failed sessions
beyond --allow-failures), 2 on a usage error. Errors name the file, line or
field at fault.
.SH ENVIRONMENT
.TP
.B OPENAI_API_KEY
the API key of the openai brain (another variable with --api-key-env);
read from the environment, never stored.
.TP
.B TMPDIR
where temporary files go.
.SH FILES
.TP
.I PREFIX/share/proxima/web
the review page's files (also compiled into the binary).
.SH SEE ALSO
The project's docs/ folder: design.md, answers.md, store.md, llm.md, export.md,
review.md, recordings.md, defaults.md and performance.md.
TAIL
