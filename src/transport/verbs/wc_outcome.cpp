#include "transport/verbs/wc_outcome.h"

namespace tent {

RailOutcome rail_outcome_of(ibv_wc_status status) {
    switch (status) {
    case IBV_WC_SUCCESS: return RailOutcome::Success;
    // The path did not answer: transport or receiver-not-ready retries ran out.
    case IBV_WC_RETRY_EXC_ERR:
    case IBV_WC_RNR_RETRY_EXC_ERR: return RailOutcome::RetryExceeded;
    case IBV_WC_RESP_TIMEOUT_ERR: return RailOutcome::Timeout;
    // A consequence of an earlier error on this QP, not a new fault.
    case IBV_WC_WR_FLUSH_ERR: return RailOutcome::Flushed;
    // The responder refused the request.
    case IBV_WC_REM_ACCESS_ERR:
    case IBV_WC_REM_INV_REQ_ERR:
    case IBV_WC_REM_OP_ERR:
    case IBV_WC_REM_INV_RD_REQ_ERR:
    case IBV_WC_REM_ABORT_ERR:
    case IBV_WC_BAD_RESP_ERR: return RailOutcome::RemoteAccess;
    // The local HCA refused the request, or broke.
    case IBV_WC_LOC_LEN_ERR:
    case IBV_WC_LOC_QP_OP_ERR:
    case IBV_WC_LOC_EEC_OP_ERR:
    case IBV_WC_LOC_PROT_ERR:
    case IBV_WC_MW_BIND_ERR:
    case IBV_WC_LOC_ACCESS_ERR:
    case IBV_WC_LOC_RDD_VIOL_ERR:
    case IBV_WC_INV_EECN_ERR:
    case IBV_WC_INV_EEC_STATE_ERR:
    case IBV_WC_FATAL_ERR:
    case IBV_WC_GENERAL_ERR:
    case IBV_WC_TM_ERR:
    case IBV_WC_TM_RNDV_INCOMPLETE: return RailOutcome::LocalProtection;
    }
    // A status newer than this code: treat as a local failure, never success.
    return RailOutcome::LocalProtection;
}

Code status_code_of(RailOutcome outcome) {
    switch (outcome) {
    case RailOutcome::Success:
    case RailOutcome::ProbeAnswered: return Code::Ok;
    case RailOutcome::Timeout: return Code::Timeout;
    case RailOutcome::RetryExceeded:
    case RailOutcome::Flushed:
    case RailOutcome::ProbeFailed: return Code::RailDown;
    case RailOutcome::RemoteAccess: return Code::RemoteAccess;
    case RailOutcome::LocalProtection:
    case RailOutcome::SubmitFailed: return Code::TransportError;
    }
    return Code::Internal;
}

} // namespace tent
