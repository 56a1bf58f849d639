# bench_lib.sh — shell helpers the benchmark scripts share (sourced, not run):
#   median                  the median of the numbers on stdin, one a line
#   cpu_seconds FILE        user + sys seconds of the shell's finished children, from
#                           the output of the builtin `times` (its second line); `times`
#                           must run in the benchmark's shell, not in a $(...) subshell
#   write_section NAME FILE BENCHMARKS.md's section between "<!-- NAME: begin -->" and
#                           "<!-- NAME: end -->" becomes FILE's lines (appended when there
#                           is none); scripts/bench/bench.py leaves such sections alone
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
cpu_seconds() { sed -n 2p "$1" | tr 'ms' '  ' | awk '{ print $1 * 60 + $2 + $3 * 60 + $4 }'; }
write_section() {
    awk -v name="$1" -v new="$2" '
        $0 == "<!-- " name ": begin -->" { skip = 1; put(); next }
        $0 == "<!-- " name ": end -->" { skip = 0; next }
        !skip { print }
        END { if (!done) { print ""; put() } }
        function put() {
            print "<!-- " name ": begin -->"
            while ((getline line < new) > 0) print line
            print "<!-- " name ": end -->"
            done = 1
        }' BENCHMARKS.md >BENCHMARKS.md.new && mv BENCHMARKS.md.new BENCHMARKS.md
}
