# One bounded fuzzing run (BOUND: -runs=N or -max_total_time=S): a fresh work corpus seeded from the committed one,
# crash/leak/timeout inputs written next to it (the test fails and names them).
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/corpus ${WORK}/artifacts)
execute_process(
  COMMAND ${FUZZER} ${BOUND} -timeout=10 -rss_limit_mb=2048 -max_len=65536
          -print_final_stats=1 -artifact_prefix=${WORK}/artifacts/ ${WORK}/corpus ${CORPUS}
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  file(GLOB found ${WORK}/artifacts/*)
  message(FATAL_ERROR "fuzzer exited ${rc}; reproduce with: ${FUZZER} ${found}")
endif()
