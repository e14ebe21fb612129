# lib.sh — the helpers the CLI test scripts share (cli_test.sh, calibrate_test.sh). Sourced after the script has set
# $case_name and $work and changed into $work.

fail() {
    echo "FAIL [$case_name]: $*" >&2
    exit 1
}
run() {  # run CMD...: captures stdout/stderr/status into out.txt/err.txt/$status (outside the listing)
    "$@" >"$work/.stdout" 2>"$work/.stderr"
    status=$?
}
listing() { find . -mindepth 1 -not -name '.stdout' -not -name '.stderr' | sort; }

# expect_bad_input PATTERN CMD...: exit 2, one stderr line per error (each "moe-roofline: ..." and at most 300
# bytes, issue 27), one containing PATTERN, no new file in the directory. expect_lines N then checks the count.
expect_bad_input() {
    local pattern=$1
    shift
    local before after
    before=$(listing)
    run "$@"
    after=$(listing)
    [[ $status -eq 2 ]] || fail "'$*' exited $status, expected 2 (stderr: $(cat .stderr))"
    [[ $(wc -l <.stderr) -ge 1 ]] || fail "'$*' printed no error"
    grep -qF -- "$pattern" .stderr || fail "'$*': stderr '$(cat .stderr)' does not mention '$pattern'"
    ! grep -qv '^moe-roofline: ' .stderr || fail "'$*': a stderr line does not start with 'moe-roofline: ': $(cat .stderr)"
    LC_ALL=C awk 'length($0) > 300 { bad = 1 } END { exit bad }' .stderr || fail "'$*': a stderr line is over 300 bytes"
    [[ "$before" == "$after" ]] || fail "'$*' left files behind: $(diff <(echo "$before") <(echo "$after") | tr '\n' ' ')"
}
expect_lines() { [[ $(wc -l <.stderr) -eq $1 ]] || fail "expected $1 stderr lines, got: $(cat .stderr)"; }

expect_ok() {
    run "$@"
    [[ $status -eq 0 ]] || fail "'$*' exited $status: $(cat .stderr)"
}

json_get() {  # json_get FILE EXPR: prints python's value of EXPR over the parsed JSON `j`
    python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}
