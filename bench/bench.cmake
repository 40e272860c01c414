# Benchmarks (bench/run runs them all; ctest runs `bench/run --quick`).
add_executable(kmsg-bench bench/bench_ring.c)
target_link_libraries(kmsg-bench PRIVATE kmsg_static)
target_include_directories(kmsg-bench PRIVATE lib)

# Records of another boot, for reading a log that spans boots (the tests
# use it too): tests/boots.c
add_executable(kmsg-boots tests/boots.c)
target_link_libraries(kmsg-boots PRIVATE kmsg_static)
target_include_directories(kmsg-boots PRIVATE lib)

# LD_PRELOAD shim reporting a process's peak heap (bench/heapcount.c)
add_library(kmsg-heapcount SHARED bench/heapcount.c)
set_target_properties(kmsg-heapcount PROPERTIES PREFIX lib)

include(bench/latency.cmake)
