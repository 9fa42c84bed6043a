# The lateness distributions of B1 as CDFs, one panel per number of active timers.
# bench/run: gnuplot -e "dir='build/bench'; sizes='1k 10k 100k'; subtitle='…'" bench/lateness-cdf.gp
# reads dir/lateness-<size>-<system>.dat ("µs fraction" lines, written by bench-lateness
# --samples) and writes dir/lateness-cdf.svg.

systems = "timerd-io_uring-exact timerd-timerfd-exact timerd-io_uring-handover timerd-timerfd-handover in-process-timerfd in-process-sd-event"
array names[6] = ["timerd io_uring, exact", "timerd timerfd, exact", \
                  "timerd io_uring, default (1 ms handover)", "timerd timerfd, default (1 ms handover)", \
                  "in-process timerfd", "in-process sd-event"]
array colors[6] = ["#1f77b4", "#17becf", "#d62728", "#ff7f0e", "#2ca02c", "#7f7f7f"]
array dashes[6] = [1, 1, 2, 2, 1, 3]

panels = words(sizes)
set terminal svg size 900, 360 * panels dynamic enhanced font "sans,11" background "#ffffff"
set output dir . "/lateness-cdf.svg"
set multiplot layout panels, 1 title "Firing lateness: deadline → the client has the firing\n" . subtitle noenhanced

set logscale x 10
set format x "10^{%L}"
set xrange [1:*]
set yrange [0:1]
set ytics 0.1
set grid xtics mxtics ytics
set xlabel "lateness (µs, log scale)"
set ylabel "fraction of firings ≤ x"
set key below horizontal maxcols 3 noenhanced

do for [size in sizes] {
        set title size . " active timers (each system: every probe of every run)"
        # A lateness of 0 µs is drawn at 1 µs (log scale).
        plot for [k = 1:6] sprintf("%s/lateness-%s-%s.dat", dir, size, word(systems, k)) \
                using ($1 < 1 ? 1 : $1):2 with steps lw 2 dt dashes[k] lc rgb colors[k] title names[k] noenhanced
}
unset multiplot
