# src/capi: the C API, shipped as libtent (only tent_* symbols exported).
# Its sources and the interposer's are compiled once, into libtentapi, which
# both libtent.so and the Open MPI component (mpi/local.mk) link whole.
noinst_LTLIBRARIES += libtentapi.la
libtentapi_la_SOURCES = src/capi/tent_capi.cpp \
	src/capi/create_engine.h src/capi/tent_capi_embed.cpp
libtentapi_la_CPPFLAGS = $(TENT_CPPFLAGS) $(DEP_CFLAGS)
lib_LTLIBRARIES += libtent.la
libtent_la_SOURCES =
# No source of its own: this names a C++ one so that it links as C++.
nodist_EXTRA_libtent_la_SOURCES = link-as-cxx.cpp
libtent_la_LIBADD = libtentapi.la libtentcore.la $(DEP_LIBS)
# Only the C API leaves the library, not even C++ template instances.
libtent_la_LDFLAGS = -version-info 0:0:0 -Wl,--version-script=$(top_srcdir)/src/capi/tent.map
EXTRA_libtent_la_DEPENDENCIES = src/capi/tent.map
EXTRA_DIST += src/capi/tent.map
