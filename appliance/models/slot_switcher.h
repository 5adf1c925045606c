// SlotSwitcher<T>: the ActivationListener that connects the model store to a ModelSlot<T>,
// so an activation or rollback is a blue-green swap of whatever the serving side loads.
//
//   Prepare(next):  load(next) builds the new T (load, warm) while the old one still serves;
//                   a load error aborts the activation and nothing changes.
//   Switch(next):   publishes the prepared T (new requests get it at once), calls
//                   on_switched (the serving side re-points whatever hands out the slot's
//                   value), then waits for the requests still holding the old T to finish
//                   (drain_timeout) and unloads it on this thread. A drain that times out is logged; the old T is then
//                   unloaded by the last request that holds it.
//   Switch(none):   the active version failed re-verification: the slot is emptied, so new
//                   requests find no model (the serving side answers 503) until another
//                   version is activated.
//   Abort(next):    drops the prepared T.
//
// One SlotSwitcher serves one model id (the daemon serves one model); Switch() calls for
// other ids are ignored.
// Public header of models/: other folders include it.
// Owns: the prepared T between Prepare and Switch/Abort. Borrows the slot.
// Thread safety: the store calls it under its own mutex, one act at a time; the slot itself
// is shared with request threads.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "kimi/log.h"
#include "models/model_slot.h"
#include "models/model_store.h"

namespace kimi::models {

template <typename T>
class SlotSwitcher : public ActivationListener {
 public:
  using Loader = std::function<Result<std::shared_ptr<T>>(const ActiveVersion&)>;

  // Called after every Publish or Clear, before the drain; may be empty.
  using SwitchedFn = std::function<void()>;

  SlotSwitcher(std::string model_id, ModelSlot<T>* slot, Loader load,
               std::chrono::milliseconds drain_timeout = std::chrono::minutes(10), SwitchedFn on_switched = {})
      : model_id_(std::move(model_id)),
        slot_(slot),
        load_(std::move(load)),
        drain_timeout_(drain_timeout),
        on_switched_(std::move(on_switched)) {}

  Status Prepare(const ActiveVersion& next) override {
    if (next.model_id != model_id_) return Status::OK();
    KIMI_ASSIGN_OR_RETURN(prepared_, load_(next));
    if (!prepared_) return Status::Internal("the loader returned nothing for " + next.digest);
    return Status::OK();
  }

  void Switch(const std::string& model_id, const std::optional<ActiveVersion>& next) override {
    if (model_id != model_id_) return;
    typename ModelSlot<T>::Retired retired;
    if (next && prepared_) {
      retired = slot_->Publish(std::move(prepared_), next->digest, next->version);
    } else {
      prepared_.reset();
      retired = slot_->Clear();
    }
    if (on_switched_) on_switched_();
    if (!retired) return;
    if (!retired.WaitDrained(drain_timeout_)) {
      log::Warn("previous model version still in use after the drain timeout; the last request unloads it",
                {{"model", model_id_}, {"digest", retired.digest()}, {"in_flight", retired.InFlight()}});
    }
  }

  void Abort(const ActiveVersion&) override { prepared_.reset(); }

  // Initial load at start-up: publishes the store's active version (store.LoadableActive()).
  Status LoadInitial(const ActiveVersion& active) {
    KIMI_RETURN_IF_ERROR(Prepare(active));
    Switch(active.model_id, active);
    return Status::OK();
  }

 private:
  const std::string model_id_;
  ModelSlot<T>* const slot_;
  const Loader load_;
  const std::chrono::milliseconds drain_timeout_;
  const SwitchedFn on_switched_;
  std::shared_ptr<T> prepared_;  // between Prepare and Switch/Abort; store's mutex serialises
};

}  // namespace kimi::models
