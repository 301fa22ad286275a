# mpi: the Open MPI 4.1 BTL component mca_btl_tent.so (mca_btl_tent(7)).
#
# The component carries its own copy of tent (the C API and the core) with
# only mca_btl_tent_component exported: mpirun loads it from the build tree
# without LD_LIBRARY_PATH, and a job that also preloads libtent keeps two
# separate engines instead of clashing symbols.
if WITH_MPI
ompicomponent_LTLIBRARIES = mpi/mca_btl_tent.la
mpi_mca_btl_tent_la_SOURCES = \
	mpi/btl_tent.h mpi/btl_tent.c \
	mpi/btl_tent_component.c \
	mpi/btl_tent_endpoint.c \
	mpi/btl_tent_frag.h mpi/btl_tent_frag.c \
	mpi/btl_tent_proc.c \
	mpi/btl_tent_reg.c
nodist_EXTRA_mpi_mca_btl_tent_la_SOURCES = link-as-cxx.cpp
# OPAL's headers are not clean under -Wextra (unused parameters in inline
# functions); they are included as system headers.
mpi_mca_btl_tent_la_CPPFLAGS = $(TENT_CPPFLAGS) $(DEP_CFLAGS) \
	$(subst -I,-isystem ,$(OPAL_CFLAGS))
mpi_mca_btl_tent_la_LIBADD = libtentapi.la libtentcore.la $(DEP_LIBS)
# Open MPI unloads a component after closing it; libibverbs and its
# provider (loaded with the component) may keep threads that outlive the
# devices, so the component stays mapped (-z nodelete).
mpi_mca_btl_tent_la_LDFLAGS = -module -avoid-version -shared -Wl,-z,nodelete \
	-Wl,--version-script=$(top_srcdir)/mpi/btl_tent.map
EXTRA_mpi_mca_btl_tent_la_DEPENDENCIES = mpi/btl_tent.map
endif
ompicomponentdir = $(ompi_componentdir)
dist_man_MANS += man/mca_btl_tent.7
EXTRA_DIST += mpi/btl_tent.map
# make distcheck installs under its own prefix, never into Open MPI's tree.
AM_DISTCHECK_CONFIGURE_FLAGS = --with-ompi-componentdir='$${libdir}/openmpi'
