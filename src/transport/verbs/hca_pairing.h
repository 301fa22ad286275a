// Which peer HCA each local HCA is paired with to form a rail.
//
// On a rail-optimised fabric HCA mlx5_1 of every node hangs off the same
// leaf switch, and the names are the same on every node; pairing by
// position instead breaks as soon as the two sides open different HCAs
// (verbs_devices on one side only): the client's only HCA mlx5_1 would be
// paired with the server's first one, mlx5_0. So HCAs with the same name
// pair first; the rest pair by position among themselves, so that hosts
// with different names still get min(local, peer) rails.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace tent {

// Pairs (local index, peer index), at most one per HCA on either side,
// min(local.size(), peer.size()) of them, in local order.
std::vector<std::pair<std::size_t, std::size_t>> pair_hcas(const std::vector<std::string>& local,
                                                           const std::vector<std::string>& peer);

} // namespace tent
