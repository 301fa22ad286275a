# src/topology: hwloc view of HCAs and NUMA nodes.
libtentcore_la_SOURCES += src/topology/topology.h src/topology/topology.cpp
