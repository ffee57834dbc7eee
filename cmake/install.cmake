# SPDX-License-Identifier: MIT
# `make install` / `cmake --install` (docs/install.md): the libraries in their own
# directory (cmake/layout.cmake), the tool on PATH, our efadv.h under include/softefa,
# softefa.pc, the man pages. Installed objects find each other by RUNPATHs relative to
# themselves ($ORIGIN), so a relocated tree (DESTDIR, --prefix) still works.
set_target_properties(efa PROPERTIES INSTALL_RPATH "$ORIGIN")
set_target_properties(softefa PROPERTIES INSTALL_RPATH "$ORIGIN/${SOFTEFA_REL_LIBDIR}")
set_target_properties(softefa_rdma PROPERTIES INSTALL_RPATH "$ORIGIN/${SOFTEFA_REL_LIBEXEC_LIB}")

install(TARGETS ibverbs efa LIBRARY DESTINATION ${SOFTEFA_LIBDIR})
install(TARGETS softefa RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS softefa_rdma RUNTIME DESTINATION ${SOFTEFA_LIBEXECDIR})
install(FILES include/infiniband/efadv.h include/infiniband/verbs_rdma65.h
  DESTINATION ${SOFTEFA_INCLUDEDIR}/infiniband)

# pkg-config: written at install time, with the prefix the install was given
# (`cmake --install --prefix`, made absolute), straight to where it goes (the build tree
# may be read-only, or another user's), and listed in the install manifest.
install(CODE "
  get_filename_component(SOFTEFA_PREFIX \"\${CMAKE_INSTALL_PREFIX}\" ABSOLUTE)
  set(SOFTEFA_LIBDIR \"${SOFTEFA_LIBDIR}\")
  set(SOFTEFA_INCLUDEDIR \"${SOFTEFA_INCLUDEDIR}\")
  set(PROJECT_VERSION \"${PROJECT_VERSION}\")
  set(pc \"\$ENV{DESTDIR}\${SOFTEFA_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig/softefa.pc\")
  message(STATUS \"Installing: \${pc}\")
  configure_file(\"${CMAKE_SOURCE_DIR}/cmake/softefa.pc.in\" \"\${pc}\" @ONLY)
  file(CHMOD \"\${pc}\" PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
  list(APPEND CMAKE_INSTALL_MANIFEST_FILES \"\${pc}\")")

# The Wireshark dissector (docs/trace.md): beside our data, not in Wireshark's plugin
# directory, where it would load for every user of Wireshark.
install(FILES tools/wireshark/softefa.lua DESTINATION ${CMAKE_INSTALL_DATADIR}/softefa/wireshark)

# The documents the man pages point at.
file(GLOB SOFTEFA_DOCS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/docs/*.md)
install(FILES ${SOFTEFA_DOCS} ${CMAKE_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})

# Man pages, made from docs/man/*.md and docs/configuration.md by scripts/md2man.py.
set(MAN_SRC ${CMAKE_SOURCE_DIR}/docs/man)
set(MAN_OUT ${CMAKE_BINARY_DIR}/man)
set(MAN_TOOL ${CMAKE_SOURCE_DIR}/scripts/md2man.py)
find_program(PYTHON3 NAMES python3 HINTS /usr/bin)
if(NOT PYTHON3)
  message(FATAL_ERROR "python3 not found (it makes the man pages): install python3")
endif()
file(GLOB MAN1_MD CONFIGURE_DEPENDS ${MAN_SRC}/*.1.md)
set(MAN_PAGES)
foreach(md ${MAN1_MD})
  get_filename_component(page ${md} NAME_WLE)
  add_custom_command(OUTPUT ${MAN_OUT}/${page}
    COMMAND ${PYTHON3} ${MAN_TOOL} --version ${PROJECT_VERSION} ${md} ${MAN_OUT}/${page}
    DEPENDS ${md} ${MAN_TOOL} VERBATIM)
  list(APPEND MAN_PAGES ${MAN_OUT}/${page})
endforeach()
add_custom_command(OUTPUT ${MAN_OUT}/softefa-config.7
  COMMAND ${PYTHON3} ${MAN_TOOL} --version ${PROJECT_VERSION}
    --name softefa-config --section 7 --what "the SOFTEFA_* environment variables"
    ${CMAKE_SOURCE_DIR}/docs/configuration.md ${MAN_OUT}/softefa-config.7
  DEPENDS ${CMAKE_SOURCE_DIR}/docs/configuration.md ${MAN_TOOL} VERBATIM)
list(APPEND MAN_PAGES ${MAN_OUT}/softefa-config.7)
add_custom_target(man ALL DEPENDS ${MAN_PAGES})
foreach(page ${MAN_PAGES})
  string(REGEX REPLACE ".*\\." "" sec ${page})
  install(FILES ${page} DESTINATION ${CMAKE_INSTALL_MANDIR}/man${sec})
endforeach()
