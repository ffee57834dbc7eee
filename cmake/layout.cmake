# SPDX-License-Identifier: MIT
# Where an installed softefa lives (docs/install.md). The libraries go to a directory of
# their own, never beside the system's libibverbs: a program loads them only when asked
# to (softefa run, or the RUNPATH that pkg-config's flags give it). That directory is
# lib/softefa whatever the distribution's libdir (lib64, lib/<triplet>): a private
# directory of the package's, as Debian's policy allows, and the one the docs name.
# Every path is relative to the prefix, so `cmake --install --prefix` and DESTDIR can
# move the lot.
include(GNUInstallDirs)
set(SOFTEFA_LIBDIR lib/softefa)
set(SOFTEFA_LIBEXECDIR ${CMAKE_INSTALL_LIBEXECDIR}/softefa)
set(SOFTEFA_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR}/softefa)
# The same paths as seen from bin/ and from libexec/softefa/ (the tool finds its
# libraries by them; the RUNPATHs below are made of them).
file(RELATIVE_PATH SOFTEFA_REL_LIBDIR /p/${CMAKE_INSTALL_BINDIR} /p/${SOFTEFA_LIBDIR})
file(RELATIVE_PATH SOFTEFA_REL_LIBEXECDIR /p/${CMAKE_INSTALL_BINDIR} /p/${SOFTEFA_LIBEXECDIR})
file(RELATIVE_PATH SOFTEFA_REL_LIBEXEC_LIB /p/${SOFTEFA_LIBEXECDIR} /p/${SOFTEFA_LIBDIR})
