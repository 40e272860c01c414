# kmsg-latency: follow latency (write -> line out of the follower) and idle
# cost of `kmsg follow`, against `busybox logread -f` and `tail -f`.
# Included from the top CMakeLists.txt: include(bench/latency.cmake)
add_executable(kmsg-latency bench/latency.c)
target_link_libraries(kmsg-latency PRIVATE kmsg_static)
target_include_directories(kmsg-latency PRIVATE lib)

# Smoke run against the kmsg tool of this build (the other targets need
# busybox syslogd and are left to the bench script).  add_test() only takes
# effect where testing is enabled.
if(KMSG_TESTS AND TARGET kmsg-tool)
  add_test(NAME latency_smoke
           COMMAND kmsg-latency --target kmsg --quick
                   --kmsg $<TARGET_FILE:kmsg-tool>)
endif()
