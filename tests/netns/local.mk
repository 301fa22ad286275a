# tests/netns: TCP rails over veth pairs between two network namespaces the
# tests create (root only; skipped otherwise), where a downed link and
# packet loss are real faults.
if ENABLE_TESTS
NETNS_CHECKS = tests/netns/tcp-link.sh tests/netns/all-pulled.sh
TESTS += $(NETNS_CHECKS)
dist_check_SCRIPTS += $(NETNS_CHECKS)
dist_check_DATA += tests/netns/lib.sh
endif
