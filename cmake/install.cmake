# Install rules and the Debian package (CPack), included by the top-level CMakeLists.txt.
#
#   cmake --install build --prefix P    P/bin/vtpin, P/lib/vtpin/libvtpin.so,
#                                       P/lib/vtpin/vtpin-junit.jar (when built: java/),
#                                       P/share/doc/vtpin/{README.md,*.md},
#                                       P/share/man/man1/vtpin.1.gz,
#                                       P/share/bash-completion/completions/vtpin,
#                                       P/lib/systemd/system/vtpin-collector.service
#   cmake --build build --target package    build/vtpin_<version>_<arch>.deb (prefix /usr)
#
# The agent goes in <prefix>/lib/vtpin, not the multiarch libdir: `vtpin attach`
# and `vtpin run` look for it at <dir of vtpin>/../lib/vtpin/libvtpin.so.
set(VTPIN_DOC_REL share/doc/vtpin)

install(TARGETS vtpin_cli RUNTIME DESTINATION bin)
install(TARGETS vtpin LIBRARY DESTINATION lib/vtpin)
if(VTPIN_JUNIT_JAR)
  install(FILES "${VTPIN_JUNIT_JAR}" DESTINATION lib/vtpin) # next to the agent it reaches
endif()
install(FILES README.md DESTINATION ${VTPIN_DOC_REL})
file(GLOB VTPIN_DOCS CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/docs/*.md")
install(FILES ${VTPIN_DOCS} DESTINATION ${VTPIN_DOC_REL})
install(DIRECTORY docs/img DESTINATION ${VTPIN_DOC_REL} OPTIONAL)

# Its .TH names the version: keep it true.
file(STRINGS "${PROJECT_SOURCE_DIR}/man/vtpin.1" VTPIN_MAN_TH REGEX "^\\.TH ")
if(NOT VTPIN_MAN_TH MATCHES "\"vtpin ${PROJECT_VERSION}\"")
  message(FATAL_ERROR "man/vtpin.1: its .TH line (${VTPIN_MAN_TH}) must say \"vtpin ${PROJECT_VERSION}\"")
endif()
# man page, gzipped as Debian wants it (-n: no name or time stamp, reproducible)
find_program(VTPIN_GZIP gzip REQUIRED)
set(VTPIN_MAN_GZ "${CMAKE_BINARY_DIR}/man/vtpin.1.gz")
add_custom_command(
  OUTPUT "${VTPIN_MAN_GZ}"
  COMMAND "${CMAKE_COMMAND}" -E make_directory "${CMAKE_BINARY_DIR}/man"
  COMMAND sh -c "'${VTPIN_GZIP}' -9n -c '${PROJECT_SOURCE_DIR}/man/vtpin.1' > '${VTPIN_MAN_GZ}'"
  DEPENDS "${PROJECT_SOURCE_DIR}/man/vtpin.1"
  COMMENT "gzip man/vtpin.1"
  VERBATIM)
add_custom_target(vtpin_man ALL DEPENDS "${VTPIN_MAN_GZ}")
install(FILES "${VTPIN_MAN_GZ}" DESTINATION share/man/man1)

install(FILES packaging/bash-completion/vtpin DESTINATION share/bash-completion/completions)

# The collector's systemd unit, its paths filled in at install time (the prefix
# of `cmake --install --prefix P` or the package's /usr).
set(VTPIN_UNIT "${CMAKE_BINARY_DIR}/packaging/vtpin-collector.service")
install(CODE "
  set(VTPIN_BIN_DIR \"\${CMAKE_INSTALL_PREFIX}/bin\")
  set(VTPIN_DOC_DIR \"\${CMAKE_INSTALL_PREFIX}/${VTPIN_DOC_REL}\")
  configure_file(\"${PROJECT_SOURCE_DIR}/packaging/vtpin-collector.service.in\" \"${VTPIN_UNIT}\" @ONLY)
")
install(FILES "${VTPIN_UNIT}" DESTINATION lib/systemd/system)

# ---- Debian package ----
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME vtpin)
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_CONTACT "vtpin maintainers <vtpin@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "finds where Java virtual threads pin their carrier threads")
set(CPACK_PACKAGE_DESCRIPTION "vtpin is a JVMTI agent (libvtpin.so) for JDK 21 to 25 that records\n\
where virtual threads pin their carriers, a collector daemon with a systemd unit\n\
(vtpin-collector.service) and the vtpin command: report, collector, status,\n\
top, attach and run.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Depends from the ELF files' NEEDED entries (dpkg-shlibdeps): libprotobuf-c1,
# libbpf1, libelf1, libdw1, libcapstone4, libmicrohttpd12, zlib1g, libc6 for bin/vtpin; libc6 for the agent.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# enable the unit on install only if asked (systemctl enable --now), stop it on removal
configure_file("${PROJECT_SOURCE_DIR}/packaging/debian/postinst" "${CMAKE_BINARY_DIR}/packaging/debian/postinst" COPYONLY)
configure_file("${PROJECT_SOURCE_DIR}/packaging/debian/prerm" "${CMAKE_BINARY_DIR}/packaging/debian/prerm" COPYONLY)
configure_file("${PROJECT_SOURCE_DIR}/packaging/debian/postrm" "${CMAKE_BINARY_DIR}/packaging/debian/postrm" COPYONLY)
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
  "${CMAKE_BINARY_DIR}/packaging/debian/postinst;${CMAKE_BINARY_DIR}/packaging/debian/prerm;${CMAKE_BINARY_DIR}/packaging/debian/postrm")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_STRIP_FILES OFF) # keep the debug info: stacks of a crashing agent stay readable
include(CPack)
