"""Argo CD health checks shipped in ``argocd/argocd-cm-patch.yaml`` (Lua, run by Argo CD).

Argo CD runs these in gopher-lua (Lua 5.1) with only the base, table and a reduced os library
loaded (no ``string``, no ``math``), with the live object as the global ``obj``. A script that
returns a table without a status does not fall back to Argo CD's built-in check, so each script
returns a status on every path. The scripts use only ``..``, ``tostring``, ``ipairs`` and
table constructors.

* ``apps/DaemonSet``: a DaemonSet labelled ``app.kubernetes.io/managed-by: gpu-render`` is
  Healthy only when every scheduled pod runs the current template and is available;
  Progressing while a rollout or a first start is under way; Suspended when an ``OnDelete``
  DaemonSet (the driver with ``autoUpgrade: false``) has pods on an older template, which
  wait for someone to delete them; Degraded when a rolling update cannot go on because more
  pods are unavailable than its ``maxUnavailable`` (an integer; the DaemonSet controller then
  replaces no further pod). Every other DaemonSet gets exactly what Argo CD's own Go check
  (gitops-engine ``getAppsv1DaemonSetHealth``) gives, message for message: this key replaces
  Argo CD's check for the kind, so the script carries that logic for them.
* ``monitoring.coreos.com/ServiceMonitor``: prometheus-operator reports per selecting
  Prometheus under ``status.bindings[].conditions[]`` (type ``Accepted``). Degraded when one
  rejected it, Progressing while one has not yet accepted its current generation, Healthy
  when all accepted it or none reports (no Prometheus selects it, or the operator runs
  without its ``StatusForConfigurationResources`` feature gate).

NFD's ``NodeFeatureRule`` (``nfd.k8s-sigs.io/v1alpha1``) has no status at all (its CRD in NFD
v0.19 has no ``status`` field and no status subresource): there is nothing to read, so no
script is shipped and Argo CD gives it no health, which never holds a sync wave.
"""

from __future__ import annotations

MANAGED_BY_KEY = "app.kubernetes.io/managed-by"
MANAGED_BY_VALUE = "gpu-render"

DAEMONSET_KEY = "apps_DaemonSet"
SERVICE_MONITOR_KEY = "monitoring.coreos.com_ServiceMonitor"

DAEMONSET_LUA = """\
-- gpu-render: DaemonSet health. gpu-render's own DaemonSets (label
-- app.kubernetes.io/managed-by=gpu-render) are Healthy only when every scheduled pod runs
-- the current template and is available. Every other DaemonSet gets Argo CD's built-in answer.
local meta = obj.metadata or {}
local labels = meta.labels or {}
local spec = obj.spec or {}
local st = obj.status or {}
local strategy = spec.updateStrategy or {}
local generation = meta.generation or 0
local observed = st.observedGeneration or 0
local desired = st.desiredNumberScheduled or 0
local updated = st.updatedNumberScheduled or 0
local available = st.numberAvailable or 0
local hs = {}

if labels["@KEY@"] ~= "@VALUE@" then
  -- Argo CD's own check (gitops-engine getAppsv1DaemonSetHealth), unchanged
  if generation > observed then
    hs.status = "Progressing"
    hs.message = "Waiting for rollout to finish: observed daemon set generation less than desired generation"
    return hs
  end
  if strategy.type == "OnDelete" then
    hs.status = "Healthy"
    hs.message = "daemon set " .. updated .. " out of " .. desired .. " new pods have been updated"
    return hs
  end
  if updated < desired then
    hs.status = "Progressing"
    hs.message = "Waiting for daemon set \\"" .. tostring(meta.name) .. "\\" rollout to finish: " .. updated .. " out of " .. desired .. " new pods have been updated..."
    return hs
  end
  if available < desired then
    hs.status = "Progressing"
    hs.message = "Waiting for daemon set \\"" .. tostring(meta.name) .. "\\" rollout to finish: " .. available .. " of " .. desired .. " updated pods are available..."
    return hs
  end
  hs.status = "Healthy"
  return hs
end

if generation > observed then
  hs.status = "Progressing"
  hs.message = "the DaemonSet controller has not yet seen generation " .. generation
  return hs
end
local unavailable = st.numberUnavailable or (desired - available)
if updated < desired then
  local old = desired - updated
  if strategy.type == "OnDelete" then
    hs.status = "Suspended"
    hs.message = "upgrade pending: " .. old .. " of " .. desired .. " pods run an older template and are replaced only when deleted (updateStrategy OnDelete): delete them node by node"
    return hs
  end
  local rolling = strategy.rollingUpdate or {}
  local budget = rolling.maxUnavailable
  if type(budget) == "number" and unavailable > budget then
    hs.status = "Degraded"
    hs.message = "rollout blocked: " .. unavailable .. " pods unavailable, more than maxUnavailable " .. budget .. "; " .. old .. " of " .. desired .. " pods still run an older template"
    return hs
  end
  hs.status = "Progressing"
  hs.message = "rolling update: " .. updated .. " of " .. desired .. " pods updated, " .. available .. " available"
  return hs
end
if available < desired then
  hs.status = "Progressing"
  hs.message = available .. " of " .. desired .. " pods available (all run the current template)"
  return hs
end
hs.status = "Healthy"
hs.message = "all " .. desired .. " pods run the current template and are available"
return hs
""".replace("@KEY@", MANAGED_BY_KEY).replace("@VALUE@", MANAGED_BY_VALUE)

SERVICE_MONITOR_LUA = """\
-- gpu-render: ServiceMonitor health from prometheus-operator's per-Prometheus bindings
-- (status.bindings[].conditions[type=Accepted]).
local hs = {}
local generation = (obj.metadata or {}).generation or 0
local bindings = (obj.status or {}).bindings or {}
local accepted = 0
local waiting = nil
for _, b in ipairs(bindings) do
  local who = tostring(b.resource) .. "/" .. tostring(b.namespace) .. "/" .. tostring(b.name)
  local found = false
  for _, c in ipairs(b.conditions or {}) do
    if c.type == "Accepted" then
      found = true
      if c.status == "False" then
        hs.status = "Degraded"
        hs.message = who .. " rejected it: " .. tostring(c.reason or "") .. " " .. tostring(c.message or "")
        return hs
      elseif c.status == "True" and (c.observedGeneration or generation) >= generation then
        accepted = accepted + 1
      else
        waiting = waiting or who
      end
    end
  end
  if not found then
    waiting = waiting or who
  end
end
if waiting ~= nil then
  hs.status = "Progressing"
  hs.message = "waiting for " .. waiting .. " to accept generation " .. generation
  return hs
end
hs.status = "Healthy"
if accepted == 0 then
  hs.message = "no Prometheus reports on it (none selects it, or prometheus-operator runs without StatusForConfigurationResources)"
else
  hs.message = "accepted by " .. accepted .. " Prometheus"
end
return hs
"""

SCRIPTS: dict[str, str] = {DAEMONSET_KEY: DAEMONSET_LUA, SERVICE_MONITOR_KEY: SERVICE_MONITOR_LUA}


def checks(kinds: set[tuple[str, str]]) -> dict[str, str]:
    """``argocd-cm`` data keys for the rendered ``(group, kind)`` pairs that have a script."""
    wanted = {f"{group}_{kind}" for group, kind in kinds}
    return {f"resource.customizations.health.{key}": SCRIPTS[key] for key in sorted(SCRIPTS) if key in wanted}
