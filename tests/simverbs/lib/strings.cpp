// The string and rate helpers of libibverbs.
#include <cstring>

#include "simverbs.h"

namespace sv {

namespace {
struct StatusName {
  const char* enum_name;
  const char* text;
};
// Indexed by enum ibv_wc_status; texts as libibverbs prints them.
const StatusName kStatus[] = {
    {"IBV_WC_SUCCESS", "success"},
    {"IBV_WC_LOC_LEN_ERR", "local length error"},
    {"IBV_WC_LOC_QP_OP_ERR", "local QP operation error"},
    {"IBV_WC_LOC_EEC_OP_ERR", "local EE context operation error"},
    {"IBV_WC_LOC_PROT_ERR", "local protection error"},
    {"IBV_WC_WR_FLUSH_ERR", "Work Request Flushed Error"},
    {"IBV_WC_MW_BIND_ERR", "memory management operation error"},
    {"IBV_WC_BAD_RESP_ERR", "bad response error"},
    {"IBV_WC_LOC_ACCESS_ERR", "local access error"},
    {"IBV_WC_REM_INV_REQ_ERR", "remote invalid request error"},
    {"IBV_WC_REM_ACCESS_ERR", "remote access error"},
    {"IBV_WC_REM_OP_ERR", "remote operation error"},
    {"IBV_WC_RETRY_EXC_ERR", "transport retry counter exceeded"},
    {"IBV_WC_RNR_RETRY_EXC_ERR", "RNR retry counter exceeded"},
    {"IBV_WC_LOC_RDD_VIOL_ERR", "local RDD violation error"},
    {"IBV_WC_REM_INV_RD_REQ_ERR", "remote invalid RD request"},
    {"IBV_WC_REM_ABORT_ERR", "aborted error"},
    {"IBV_WC_INV_EECN_ERR", "invalid EE context number"},
    {"IBV_WC_INV_EEC_STATE_ERR", "invalid EE context state"},
    {"IBV_WC_FATAL_ERR", "fatal error"},
    {"IBV_WC_RESP_TIMEOUT_ERR", "response timeout error"},
    {"IBV_WC_GENERAL_ERR", "general error"},
    {"IBV_WC_TM_ERR", "TM error"},
    {"IBV_WC_TM_RNDV_INCOMPLETE", "TM software rendezvous"},
};
constexpr int kNumStatus = int(sizeof kStatus / sizeof kStatus[0]);
}  // namespace

const char* status_name(int st) { return st >= 0 && st < kNumStatus ? kStatus[st].enum_name : "unknown"; }

// Accepts the enum name (any case) or the text ibv_wc_status_str prints.
int parse_status(const std::string& s) {
  for (int i = 0; i < kNumStatus; i++)
    if (strcasecmp(s.c_str(), kStatus[i].enum_name) == 0 || strcasecmp(s.c_str(), kStatus[i].text) == 0 ||
        strcasecmp(s.c_str(), kStatus[i].enum_name + 7) == 0)
      return i;
  return -1;
}

}  // namespace sv

using namespace sv;

SV_EXPORT const char* ibv_wc_status_str(ibv_wc_status st) {
  return int(st) >= 0 && int(st) < kNumStatus ? kStatus[st].text : "unknown";
}

SV_EXPORT const char* ibv_node_type_str(ibv_node_type t) {
  static const char* const n[] = {"unknown", "InfiniBand channel adapter", "InfiniBand switch",
                                  "InfiniBand router", "iWARP NIC", "usNIC", "usNIC UDP", "unspecified"};
  return int(t) >= 1 && int(t) <= 7 ? n[t] : n[0];
}

SV_EXPORT const char* ibv_port_state_str(ibv_port_state s) {
  static const char* const n[] = {"PORT_NOP", "PORT_DOWN", "PORT_INIT", "PORT_ARMED", "PORT_ACTIVE",
                                  "PORT_ACTIVE_DEFER"};
  return int(s) >= 0 && int(s) <= 5 ? n[s] : "unknown";
}

SV_EXPORT const char* ibv_event_type_str(ibv_event_type e) {
  static const char* const n[] = {
      "CQ error",           "local work queue catastrophic error", "invalid request local work queue error",
      "local access violation work queue error", "communication established", "send queue drained",
      "path migrated",      "path migration request error",       "local catastrophic error",
      "port active",        "port error",                          "LID change",
      "P_Key change",       "SM change",                           "SRQ catastrophic error",
      "SRQ limit reached",  "last WQE reached",                    "client reregistration",
      "GID table change",   "WQ fatal"};
  return int(e) >= 0 && int(e) < int(sizeof n / sizeof n[0]) ? n[e] : "unknown";
}

namespace {
struct RateRow {
  ibv_rate rate;
  int mult;
  int mbps;
};
const RateRow kRates[] = {
    {IBV_RATE_2_5_GBPS, 1, 2500},     {IBV_RATE_5_GBPS, 2, 5000},       {IBV_RATE_10_GBPS, 4, 10000},
    {IBV_RATE_20_GBPS, 8, 20000},     {IBV_RATE_30_GBPS, 12, 30000},    {IBV_RATE_40_GBPS, 16, 40000},
    {IBV_RATE_60_GBPS, 24, 60000},    {IBV_RATE_80_GBPS, 32, 80000},    {IBV_RATE_120_GBPS, 48, 120000},
    {IBV_RATE_14_GBPS, 5, 14062},     {IBV_RATE_56_GBPS, 22, 56250},    {IBV_RATE_112_GBPS, 45, 112500},
    {IBV_RATE_168_GBPS, 67, 168750},  {IBV_RATE_25_GBPS, 10, 25781},    {IBV_RATE_100_GBPS, 40, 103125},
    {IBV_RATE_200_GBPS, 80, 206250},  {IBV_RATE_300_GBPS, 120, 309375}, {IBV_RATE_28_GBPS, 11, 28125},
    {IBV_RATE_50_GBPS, 20, 53125},    {IBV_RATE_400_GBPS, 160, 425000}, {IBV_RATE_600_GBPS, 240, 637500},
};
}  // namespace

SV_EXPORT int ibv_rate_to_mult(ibv_rate rate) {
  for (auto& r : kRates)
    if (r.rate == rate) return r.mult;
  return -1;
}
SV_EXPORT ibv_rate mult_to_ibv_rate(int mult) {
  for (auto& r : kRates)
    if (r.mult == mult) return r.rate;
  return IBV_RATE_MAX;
}
SV_EXPORT int ibv_rate_to_mbps(ibv_rate rate) {
  for (auto& r : kRates)
    if (r.rate == rate) return r.mbps;
  return -1;
}
SV_EXPORT ibv_rate mbps_to_ibv_rate(int mbps) {
  for (auto& r : kRates)
    if (r.mbps == mbps) return r.rate;
  return IBV_RATE_MAX;
}
