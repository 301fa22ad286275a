# src/capi: the C API, shipped as libtent (only tent_* symbols exported).
lib_LTLIBRARIES += libtent.la
libtent_la_SOURCES = src/capi/tent_capi.cpp \
	src/capi/create_engine.h src/capi/tent_capi_embed.cpp
libtent_la_CPPFLAGS = $(TENT_CPPFLAGS) $(DEP_CFLAGS)
libtent_la_LIBADD = libtentcore.la $(DEP_LIBS)
# Only the C API leaves the library, not even C++ template instances.
libtent_la_LDFLAGS = -version-info 0:0:0 -Wl,--version-script=$(top_srcdir)/src/capi/tent.map
EXTRA_libtent_la_DEPENDENCIES = src/capi/tent.map
EXTRA_DIST += src/capi/tent.map
