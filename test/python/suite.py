"""The server driven by the real, unmodified Python client (Debian's python3-kubernetes).

Usage: python3 suite.py <server-url> <profile>   (profile: kubernetes | orch)

In the kubernetes profile the typed clients run (CoreV1Api, CoordinationV1Api), watch with
resume, paging, errors, and the dynamic client; in the orch profile the same scenarios run through
the dynamic client and raw calls, since the typed clients hard-code k8s.io groups. Prints one line
per scenario ("ok <name>") and exits non-zero on the first failure, with the traceback.
"""
import sys
import time
import traceback

import kubernetes
from kubernetes import client, watch
from kubernetes.client.rest import ApiException
from kubernetes.dynamic import DynamicClient

URL, PROFILE = sys.argv[1], sys.argv[2]
DOMAIN = "k8s.io" if PROFILE == "kubernetes" else "orch.io"
COORD = "coordination.%s/v1" % DOMAIN
NS = "py-%s" % PROFILE

conf = client.Configuration()
conf.host = URL
api_client = client.ApiClient(conf)
core = client.CoreV1Api(api_client)
dyn = DynamicClient(api_client)


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def expect_status(code, fn, *args, **kwargs):
    try:
        fn(*args, **kwargs)
    except ApiException as e:
        check(e.status == code, "expected %d, got %d: %s" % (code, e.status, e.body))
        return e
    raise AssertionError("expected %d, the call succeeded" % code)


def scenario(fn):
    try:
        fn()
        print("ok %s" % fn.__name__, flush=True)
    except Exception:
        print("FAIL %s" % fn.__name__, flush=True)
        traceback.print_exc()
        sys.exit(1)


def typed_core():
    ns = core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=NS, labels={"suite": "py"})))
    check(ns.metadata.name == NS and ns.status.phase == "Active", "namespace created Active")
    check(("kubernetes" if PROFILE == "kubernetes" else "orch") in ns.spec.finalizers, "namespace finalizer")
    got = core.read_namespace(NS)
    check(got.metadata.uid == ns.metadata.uid, "read namespace")
    names = [n.metadata.name for n in core.list_namespace(label_selector="suite=py").items]
    check(names == [NS], "label selector: %s" % names)
    patched = core.patch_namespace(NS, {"metadata": {"labels": {"extra": "1"}}})
    check(patched.metadata.labels.get("extra") == "1", "patch namespace")
    node = client.V1Node(metadata=client.V1ObjectMeta(name="py-node"), spec=client.V1NodeSpec(pod_cidr="10.244.9.0/24"))
    created = core.create_node(node)
    check(created.spec.pod_cid_rs == ["10.244.9.0/24"], "podCIDRs mirrored: %s" % created.spec.pod_cid_rs)
    created.status = client.V1NodeStatus(conditions=[client.V1NodeCondition(type="Ready", status="True")])
    st = core.replace_node_status("py-node", created)
    check(st.status.conditions[0].status == "True", "node status subresource")
    core.patch_node("py-node", {"spec": {"unschedulable": True}})
    sel = core.list_node(field_selector="spec.unschedulable=true")
    check([n.metadata.name for n in sel.items] == ["py-node"], "field selector")
    core.delete_node("py-node")
    expect_status(404, core.read_node, "py-node")


def typed_leases():
    coord = client.CoordinationV1Api(api_client)
    for i in range(5):
        coord.create_namespaced_lease(NS, client.V1Lease(metadata=client.V1ObjectMeta(name="l%d" % i), spec=client.V1LeaseSpec(holder_identity="h%d" % i, lease_duration_seconds=15)))
    expect_status(409, coord.create_namespaced_lease, NS, client.V1Lease(metadata=client.V1ObjectMeta(name="l0")))
    page1 = coord.list_namespaced_lease(NS, limit=2)
    check(len(page1.items) == 2 and page1.metadata._continue, "first page")
    check(page1.metadata.remaining_item_count == 3, "remaining %s" % page1.metadata.remaining_item_count)
    seen = [l.metadata.name for l in page1.items]
    cont = page1.metadata._continue
    while cont:
        page = coord.list_namespaced_lease(NS, limit=2, _continue=cont)
        seen += [l.metadata.name for l in page.items]
        cont = page.metadata._continue
    check(seen == ["l0", "l1", "l2", "l3", "l4"], "paging: %s" % seen)
    lease = coord.read_namespaced_lease("l0", NS)
    lease.spec.holder_identity = "new"
    updated = coord.replace_namespaced_lease("l0", NS, lease)
    check(updated.spec.holder_identity == "new", "replace")
    lease.spec.holder_identity = "stale"
    expect_status(409, coord.replace_namespaced_lease, "l0", NS, lease)
    coord.patch_namespaced_lease("l1", NS, {"spec": {"leaseTransitions": 3}})
    check(coord.read_namespaced_lease("l1", NS).spec.lease_transitions == 3, "patch")
    allns = coord.list_lease_for_all_namespaces(label_selector="")
    check(len([l for l in allns.items if l.metadata.namespace == NS]) == 5, "list across namespaces")
    bad = expect_status(422, coord.create_namespaced_lease, NS, client.V1Lease(metadata=client.V1ObjectMeta(name="bad"), spec=client.V1LeaseSpec(lease_duration_seconds=0)))
    check("leaseDurationSeconds" in bad.body, "422 names the field")
    coord.delete_namespaced_lease("l4", NS)
    expect_status(404, coord.read_namespaced_lease, "l4", NS)


def typed_watch_with_resume():
    coord = client.CoordinationV1Api(api_client)
    rv = coord.list_namespaced_lease(NS).metadata.resource_version
    w = watch.Watch()
    got = []
    coord.create_namespaced_lease(NS, client.V1Lease(metadata=client.V1ObjectMeta(name="w1")))
    coord.patch_namespaced_lease("w1", NS, {"spec": {"holderIdentity": "x"}})
    for ev in w.stream(coord.list_namespaced_lease, NS, resource_version=rv, timeout_seconds=5):
        got.append((ev["type"], ev["object"].metadata.name, ev["object"].metadata.resource_version))
        if len(got) == 2:
            w.stop()
    check([g[0] for g in got] == ["ADDED", "MODIFIED"], "events %s" % got)
    # Resume from the last event seen: only what happened after it.
    coord.delete_namespaced_lease("w1", NS)
    w2 = watch.Watch()
    later = []
    for ev in w2.stream(coord.list_namespaced_lease, NS, resource_version=got[-1][2], timeout_seconds=5):
        later.append((ev["type"], ev["object"].metadata.name))
        w2.stop()
    check(later == [("DELETED", "w1")], "resumed %s" % later)


def dynamic_client():
    leases = dyn.resources.get(api_version=COORD, kind="Lease")
    body = {"apiVersion": COORD, "kind": "Lease", "metadata": {"name": "dyn"}, "spec": {"holderIdentity": "dynamic"}}
    created = leases.create(body=body, namespace=NS)
    check(created.spec.holderIdentity == "dynamic", "dynamic create")
    got = leases.get(name="dyn", namespace=NS)
    check(got.metadata.uid == created.metadata.uid, "dynamic get")
    patched = leases.patch(body={"spec": {"leaseDurationSeconds": 20}}, name="dyn", namespace=NS, content_type="application/merge-patch+json")
    check(patched.spec.leaseDurationSeconds == 20, "dynamic patch")
    listed = leases.get(namespace=NS, label_selector="")
    check("dyn" in [i.metadata.name for i in listed.items], "dynamic list")
    events = []
    for ev in leases.watch(namespace=NS, resource_version=patched.metadata.resourceVersion, timeout=3):
        events.append(ev["type"])
        break
    leases.delete(name="dyn", namespace=NS)
    try:
        leases.get(name="dyn", namespace=NS)
        raise AssertionError("dynamic get after delete succeeded")
    except kubernetes.dynamic.exceptions.NotFoundError:
        pass
    nodes = dyn.resources.get(api_version="v1", kind="Node")
    nodes.create(body={"apiVersion": "v1", "kind": "Node", "metadata": {"name": "dyn-node"}})
    check(nodes.get(name="dyn-node").metadata.name == "dyn-node", "dynamic node")
    nodes.delete(name="dyn-node")


def orch_raw_calls():
    # Raw calls through the client's own request path (what the typed clients use underneath).
    path = "/apis/%s/namespaces/%s/leases" % (COORD, NS)
    body = {"apiVersion": COORD, "kind": "Lease", "metadata": {"name": "raw"}, "spec": {"holderIdentity": "raw"}}
    data, status, _ = api_client.call_api(path, "POST", body=body, response_type="object", _return_http_data_only=False, header_params={"Content-Type": "application/json"})
    check(status == 201 and data["metadata"]["name"] == "raw", "raw create %s" % status)
    data, status, _ = api_client.call_api(path + "/raw", "GET", response_type="object", _return_http_data_only=False)
    check(status == 200 and data["spec"]["holderIdentity"] == "raw", "raw get")
    api_client.call_api(path + "/raw", "DELETE", response_type="object")


def cleanup():
    core.delete_namespace(NS)
    deadline = time.time() + 20
    while time.time() < deadline:
        try:
            core.read_namespace(NS)
        except ApiException as e:
            if e.status == 404:
                return
        time.sleep(0.2)
    raise AssertionError("namespace %s still there" % NS)


if PROFILE == "kubernetes":
    for s in (typed_core, typed_leases, typed_watch_with_resume, dynamic_client, orch_raw_calls, cleanup):
        scenario(s)
else:
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=NS)))
    for s in (dynamic_client, orch_raw_calls, cleanup):
        scenario(s)
print("done", flush=True)
