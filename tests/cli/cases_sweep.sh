# cases_sweep.sh — cli_test.sh's sweep cases: the grid and its columns, determinism, per-point errors, bad input, the
# output file (kept on failure, interrupts, symlinks, killed runs) and progress. Sourced by cli_test.sh, which sets
# $bin and $work, changes into $work and defines fail/run/expect_* (lib.sh) and write_scenarios/write_tiny_model.

case_grid() {  # header and row count of a 4 x 3 grid, first axis outermost
    write_scenarios
    expect_ok "$bin" sweep dsv3.json --axis workload.batch=1:8:x2 --axis workload.context_len=1024,4096,8192 \
        --columns decode.tpot_ms,memory.fits -o grid.csv -q
    [[ -f grid.csv ]] || fail "grid.csv not written"
    [[ $(head -1 grid.csv) == "workload.batch,workload.context_len,decode.tpot_ms,memory.fits,status,error" ]] ||
        fail "header: $(head -1 grid.csv)"
    [[ $(wc -l <grid.csv) -eq 13 ]] || fail "expected 1 header + 12 rows, got $(wc -l <grid.csv) lines"
    [[ $(sed -n 2p grid.csv | cut -d, -f1,2) == "1,1024" ]] || fail "row 1: $(sed -n 2p grid.csv)"
    [[ $(sed -n 3p grid.csv | cut -d, -f1,2) == "1,4096" ]] || fail "row 2 (inner axis fastest): $(sed -n 3p grid.csv)"
    [[ $(sed -n 5p grid.csv | cut -d, -f1,2) == "2,1024" ]] || fail "row 4: $(sed -n 5p grid.csv)"
    [[ $(tail -1 grid.csv | cut -d, -f1,2) == "8,8192" ]] || fail "last row: $(tail -1 grid.csv)"
    python3 - grid.csv <<'EOF' || fail "row contents"
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
assert all(len(r) == 6 for r in rows), [len(r) for r in rows]
for r in rows[1:]:
    assert r[4] == "ok" and r[5] == "", r
    assert float(r[2]) > 0, r
    assert r[3] in ("true", "false"), r
# TPOT grows with context at a fixed batch
t = {(r[0], r[1]): float(r[2]) for r in rows[1:]}
assert t[("8", "1024")] < t[("8", "8192")], t
EOF
    ls -A | grep -q '^\.grid' && fail "temporary file left: $(ls -A)"
    true
}

case_default_columns() {  # without --columns: the axes, then every output column, including DESIGN §4.3's names
    write_scenarios
    expect_ok "$bin" sweep dsv3.json --axis workload.batch=16,32 -q
    header=$(head -1 .stdout)
    for name in prefill.step_ms prefill.ttft_ms prefill.tokens_per_s_per_gpu decode.step_ms decode.tpot_ms \
        decode.tokens_per_s_per_gpu decode.tokens_per_s_per_user memory.weights_bytes memory.kv_cache_bytes \
        memory.activation_bytes memory.workspace_bytes memory.comm_buffer_bytes memory.reserved_bytes \
        memory.total_bytes memory.capacity_bytes memory.fits memory.kv_bytes_per_token memory.max_batch \
        model.total_params model.active_params status error; do
        [[ ",$header," == *",$name,"* ]] || fail "column $name missing from header: $header"
    done
    [[ $header == workload.batch,* ]] || fail "axis column is not first: $header"
    [[ $(wc -l <.stdout) -eq 3 ]] || fail "expected 3 lines on stdout"
    expect_ok "$bin" presets columns
    n_columns=$(($(wc -l <.stdout) - 1))
    [[ $(($(tr -cd , <<<"$header" | wc -c) + 1)) -eq $((n_columns + 1)) ]] || fail "header has not 1 + $n_columns columns"
}

case_determinism() {  # the same command twice gives byte-identical files, and stdout holds the same bytes
    write_scenarios
    args=(sweep dsv3.json --axis parallel.ep=1,2,4,8 --axis workload.batch=1:256:x2 --axis model=deepseek-v3,kimi-k2 -q)
    expect_ok "$bin" "${args[@]}" -o a.csv
    expect_ok "$bin" "${args[@]}" -o b.csv
    expect_ok "$bin" "${args[@]}" -o -
    cmp a.csv b.csv || fail "two runs differ"
    cmp a.csv .stdout || fail "file and stdout differ"
    [[ $(wc -l <a.csv) -eq $((1 + 4 * 9 * 2)) ]] || fail "row count $(wc -l <a.csv)"
}

case_invalid_point() {  # a point whose scenario is invalid gets a row with status and error; the sweep goes on
    write_scenarios
    expect_ok "$bin" sweep dsv3.json --axis parallel.ep=1,3,8 --columns decode.tpot_ms -q -o pts.csv
    python3 - pts.csv <<'EOF' || fail "rows: $(cat pts.csv)"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert [r["parallel.ep"] for r in rows] == ["1", "3", "8"], rows
assert rows[0]["status"] == "ok" and rows[2]["status"] == "ok", rows
bad = rows[1]
assert bad["status"] != "ok" and "parallel.ep" in bad["error"], bad
assert bad["decode.tpot_ms"] == "", bad
EOF
}

case_bad_json() {
    write_scenarios
    printf '{"model": "deepseek-v3", "hardware": }\n' >broken.json
    expect_bad_input "broken.json: invalid JSON" "$bin" eval broken.json
    expect_bad_input "broken.json: invalid JSON" "$bin" sweep broken.json --axis workload.batch=1,2 -o out.csv
    expect_bad_input "standard input: invalid JSON" sh -c "echo '[1,' | '$bin' eval -"
    expect_bad_input "--set model" "$bin" eval dsv3.json --set 'model={"hidden_size":'
}

case_unknown_path() {
    write_scenarios
    expect_bad_input "foo.bar" "$bin" eval dsv3.json --set foo.bar=1
    expect_bad_input "foo.bar" "$bin" sweep dsv3.json --axis foo.bar=1,2 -o out.csv
    expect_bad_input "workload.batch" "$bin" eval dsv3.json --set workload.batch=many
    expect_bad_input "--set" "$bin" eval dsv3.json --set workload.batch
    printf '{"model":"deepseek-v3","parallel":{"epp":8}}' >typo.json
    expect_bad_input "parallel.epp" "$bin" eval typo.json
}

case_malformed_range() {
    write_scenarios
    for values in 1:0:x2 1:10:x1 a:b 1:8 1,,2 0:16:+4; do
        expect_bad_input "workload.batch" "$bin" sweep dsv3.json --axis "workload.batch=$values" -o out.csv
    done
    expect_bad_input "--axis" "$bin" sweep dsv3.json --axis workload.batch -o out.csv
    expect_bad_input "given twice" "$bin" sweep dsv3.json --axis workload.batch=1 --axis workload.batch=2 -o out.csv
    expect_bad_input "precision.kv_cache=fp9" "$bin" sweep dsv3.json --axis precision.kv_cache=fp8,fp9 -o out.csv
}

case_unknown_column() {
    write_scenarios
    expect_bad_input "decode.nope" "$bin" sweep dsv3.json --axis workload.batch=1,2 --columns decode.tpot_ms,decode.nope -o out.csv
    expect_bad_input "given twice" "$bin" sweep dsv3.json --axis workload.batch=1,2 --columns decode.tpot_ms,decode.tpot_ms -o out.csv
}

case_unreadable_scenario() {
    expect_bad_input "missing.json" "$bin" eval missing.json
    expect_bad_input "missing.json" "$bin" sweep missing.json --axis workload.batch=1,2 -o out.csv
    mkdir adir
    expect_bad_input "adir" "$bin" eval adir/
    expect_bad_input "no-such-preset" "$bin" eval no-such-preset
    printf '{"model":"./nowhere/config.json"}' >ref.json
    expect_bad_input "nowhere/config.json" "$bin" eval ref.json
}

case_unwritable_output() {
    write_scenarios
    expect_bad_input "nodir/out.csv" "$bin" sweep dsv3.json --axis workload.batch=1,2 -o nodir/out.csv
    touch plain
    expect_bad_input "plain/out.csv" "$bin" sweep dsv3.json --axis workload.batch=1,2 -o plain/out.csv
    mkdir outdir
    expect_bad_input "outdir" "$bin" sweep dsv3.json --axis workload.batch=1,2 -o outdir
}

case_keeps_old_file() {  # a failed sweep leaves an existing output file exactly as it was
    write_scenarios
    echo "precious" >out.csv
    expect_bad_input "workload.batch" "$bin" sweep dsv3.json --axis workload.batch=1:0:x2 -o out.csv
    [[ $(cat out.csv) == precious ]] || fail "out.csv was modified"
}

case_interrupt() {  # SIGINT and SIGTERM mid-sweep: exit 128+N, the old output file untouched, no temporary file
    write_scenarios
    echo precious >big.csv
    for sig in INT TERM; do
        "$bin" sweep dsv3.json --axis workload.batch=1:4096:+1 --axis workload.context_len=1024:65536:+2 \
            --axis parallel.ep=1,2,4,8 -o big.csv -q 2>err.txt &
        pid=$!
        # the temporary file appears once the grid is checked and the handlers are installed: interrupt mid-write
        for _ in $(seq 100); do ls -A | grep -q '^\.big\.csv\.' && break; sleep 0.1; done
        ls -A | grep -q '^\.big\.csv\.' || fail "SIG$sig: no temporary file while the sweep runs: $(ls -A)"
        sleep 0.2
        kill -$sig $pid
        wait $pid
        st=$?
        expected=$((128 + $(kill -l $sig)))
        [[ $st -eq $expected ]] || fail "SIG$sig: exit $st, expected $expected ($(cat err.txt))"
        grep -q "interrupted" err.txt || fail "SIG$sig: no message: $(cat err.txt)"
        rm -f err.txt
        [[ -z $(ls -A | grep -v -e '^dsv3.json$' -e '^qwen.json$' -e '^big.csv$') ]] || fail "SIG$sig left files: $(ls -A)"
        [[ $(cat big.csv) == precious ]] || fail "SIG$sig: big.csv was modified"
    done
}

case_output_links_and_kills() {  # issue 27: -o through symlinks writes their target; killed runs' temporaries are removed
    write_scenarios
    mkdir sub
    echo old >sub/t.csv
    ln -s sub/t.csv link.csv
    ln -s link.csv chain.csv
    ln -s sub/new.csv dangling.csv
    for out in link.csv chain.csv dangling.csv; do
        expect_ok "$bin" sweep dsv3.json --axis workload.batch=1,2 --columns decode.tpot_ms -q -o "$out"
        [[ -L $out ]] || fail "-o $out replaced the link"
    done
    [[ $(head -1 sub/t.csv) == workload.batch,decode.tpot_ms,status,error ]] || fail "sub/t.csv: $(head -1 sub/t.csv)"
    [[ $(wc -l <sub/new.csv) -eq 3 ]] || fail "the dangling link's target was not written"
    ln -s loop2 loop1 && ln -s loop1 loop2
    expect_bad_input "-o loop1: too many levels of symbolic links" "$bin" sweep dsv3.json --axis workload.batch=1 -o loop1
    rm -f loop1 loop2 link.csv chain.csv dangling.csv && rm -rf sub
    # signals that end the process: the temporary file goes, exit 128+N (SIGKILL cannot be caught: the next run
    # into the directory removes what it left, and only temporaries of processes that are gone)
    echo precious >big.csv
    for sig in QUIT USR1 KILL; do
        "$bin" sweep dsv3.json --axis workload.batch=1:4096:+1 --axis workload.context_len=1024:65536:+2 -o big.csv -q 2>err.txt &
        pid=$!
        for _ in $(seq 100); do ls -A | grep -q '^\.big\.csv\.' && break; sleep 0.1; done
        sleep 0.2
        kill -$sig $pid
        wait $pid 2>/dev/null
        st=$?
        [[ $st -eq $((128 + $(kill -l $sig))) ]] || fail "SIG$sig: exit $st ($(cat err.txt))"
        [[ $sig == KILL ]] || [[ -z $(ls -A | grep '^\.big') ]] || fail "SIG$sig left $(ls -A | grep '^\.big')"
    done
    rm -f err.txt
    [[ $(ls -A | grep -c '^\.big\.csv\.moe-roofline-') -eq 1 ]] || fail "SIGKILL: expected one temporary: $(ls -A)"
    sleep 30 &
    local live=$!
    touch ".big.csv.moe-roofline-$(hostname | cut -c1-32)-$live-ABCDEF"
    expect_ok "$bin" sweep dsv3.json --axis workload.batch=1,2 -q -o big.csv
    kill $live
    [[ $(ls -A | grep '^\.big') == ".big.csv.moe-roofline-$(hostname | cut -c1-32)-$live-ABCDEF" ]] ||
        fail "after the next run: $(ls -A | grep '^\.big' | tr '\n' ' ') (the dead run's temporary removed, the live one's kept)"
    rm -f .big.csv.moe-roofline-*
    [[ $(wc -l <big.csv) -eq 3 ]] || fail "big.csv not written"
}

case_progress() {  # stderr that is not a terminal gets one line per 10% and a summary; a terminal, one redrawn line
    write_scenarios
    export MOE_ROOFLINE_PROGRESS_DELAY=0  # instead of a sweep that runs over a second
    expect_ok "$bin" sweep dsv3.json --axis workload.batch=1:1024:+1 --axis workload.context_len=1024:32768:+1024 \
        --columns status -o /dev/null
    grep -q "points/s" .stderr || fail "no progress lines: $(cat .stderr)"
    grep -q "s left" .stderr || fail "no ETA: $(cat .stderr)"
    [[ $(grep -c "%" .stderr) -ge 9 && $(grep -c "%" .stderr) -le 11 ]] || fail "not one line per 10%: $(cat .stderr)"
    tail -1 .stderr | grep -q "32768 points in" || fail "no summary line: $(tail -1 .stderr)"
    [[ -c /dev/null ]] || fail "/dev/null is no longer a device"
    expect_ok "$bin" sweep dsv3.json --axis workload.batch=1:1024:+1 --columns status -o out.csv -q
    [[ ! -s .stderr ]] || fail "--quiet printed: $(cat .stderr)"
    if command -v script >/dev/null; then  # a pseudo-terminal: redrawn in place with \r
        script -qec "'$bin' sweep dsv3.json --axis workload.batch=1:1024:+1 --axis workload.context_len=1024:32768:+1024 --columns status -o out.csv" tty.txt >/dev/null
        grep -q $'\r' tty.txt || fail "no carriage return on a terminal"
        [[ $(grep -c "points in" tty.txt) -eq 1 ]] || fail "terminal summary: $(cat -v tty.txt | tail -c 300)"
    fi
}

