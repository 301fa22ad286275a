// The nodes of a map's erased entries (std::map or std::unordered_map),
// kept for its next inserts: a map on a per-request path (a request's
// record, its pieces in flight on a rail) then allocates only while it
// grows past its largest size so far.
// Not synchronised: it belongs with its map.
#pragma once

#include <cstddef>
#include <iterator>
#include <utility>
#include <vector>

#include "common/sanitizers.h"

namespace tent {

template <typename Map>
class NodeSpares {
public:
    // map[key] = value, in a kept node when there is one.
    typename Map::iterator assign(Map& map, const typename Map::key_type& key, typename Map::mapped_type value) {
        if (spare_.empty()) return map.insert_or_assign(key, std::move(value)).first;
        typename Map::node_type node = std::move(spare_.back());
        spare_.pop_back();
        node.key() = key;
        node.mapped() = std::move(value);
        auto result = map.insert(std::move(node));
        if (!result.inserted) {  // the key was there: as operator[] would
            result.position->second = std::move(result.node.mapped());
            spare_.push_back(std::move(result.node));
        }
        return result.position;
    }

    // map.erase(at), keeping the node; the entry after it.
    typename Map::iterator erase(Map& map, typename Map::iterator at) {
        auto next = std::next(at);
        typename Map::node_type node = map.extract(at);
        if (!kAddressSanitizer && spare_.size() < kKept) spare_.push_back(std::move(node));
        return next;
    }

    std::size_t kept() const { return spare_.size(); }

private:
    // More than a rail or an engine keeps in flight in the common case;
    // beyond it, nodes are freed as usual.
    static constexpr std::size_t kKept = 1024;
    std::vector<typename Map::node_type> spare_;
};

} // namespace tent
