"""The server driven by the real, unmodified Python client (Debian's python3-kubernetes).

Usage: python3 suite.py <server-url> <profile> [kubeconfig]   (profile: kubernetes | orch | identity)

Over HTTPS the kubeconfig the server wrote gives the CA and the administrator's certificate.
The identity profile authenticates otherwise: with the bearer token in $SUITE_TOKEN, then with the
client certificate and key in $SUITE_CERT and $SUITE_KEY (files), and prints the user each is
("identity <credential> <json>") as a SelfSubjectReview answers it.

In the kubernetes profile the typed clients run (CoreV1Api, CoordinationV1Api), watch with
resume, paging, errors, and the dynamic client; in the orch profile the same scenarios run through
the dynamic client and raw calls, since the typed clients hard-code k8s.io groups. The kubernetes
profile then runs the client's own e2e tests for served kinds. Prints one line per scenario
("ok <name>"); a failure prints its traceback and ends the run, except among the independent e2e
cases, which all run before the suite exits non-zero.
"""
import json
import os
import sys
import tempfile
import time
import traceback
import uuid

import kubernetes
from kubernetes import client, utils, watch
from kubernetes.client.rest import ApiException
from kubernetes.dynamic import DynamicClient

URL, PROFILE = sys.argv[1], sys.argv[2]
KUBECONFIG = sys.argv[3] if len(sys.argv) > 3 else None
DOMAIN = "k8s.io" if PROFILE == "kubernetes" else "orch.io"
COORD = "coordination.%s/v1" % DOMAIN
NS = "py-%s" % PROFILE

conf = client.Configuration()
if KUBECONFIG:
    kubernetes.config.load_kube_config(config_file=KUBECONFIG, client_configuration=conf)
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


FAILED = []


def scenario(fn, keep_going=False):
    """Runs one scenario; a failure ends the run unless keep_going (independent cases)."""
    try:
        fn()
        print("ok %s" % fn.__name__, flush=True)
    except Exception:
        print("FAIL %s" % fn.__name__, flush=True)
        traceback.print_exc()
        FAILED.append(fn.__name__)
        if not keep_going:
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


# ---------------------------------------------------------------------------------------------
# The Python client's own e2e tests (kubernetes/e2e_test in its repository) that use only kinds
# this server serves, written again here with the same client calls and expectations. Their YAML
# fixtures are reproduced below. Kubernetes profile only: they use the typed APIs and k8s.io groups.

E2E_NS = "e2e-test-utils"
FIXTURES = {
    "core-namespace.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: development\n  labels:\n    name: development\n",
    "namespace-list.yaml": "apiVersion: v1\nkind: NamespaceList\nitems:\n"
    + "".join("- apiVersion: v1\n  kind: Namespace\n  metadata:\n    name: %s\n    labels:\n      name: %s\n" % (n, n) for n in ("mock-1", "mock-2")),
    "api-service.yaml": "apiVersion: apiregistration.k8s.io/v1\nkind: APIService\nmetadata:\n  name: v1alpha1.wardle.k8s.io\nspec:\n"
    "  insecureSkipTLSVerify: true\n  group: wardle.k8s.io\n  groupPriorityMinimum: 1000\n  versionPriority: 15\n"
    "  service:\n    name: api\n    namespace: wardle\n  version: v1alpha1\n",
}
FIXTURE_DIR = tempfile.mkdtemp(prefix="py-e2e-")
for _name, _text in FIXTURES.items():
    with open(os.path.join(FIXTURE_DIR, _name), "w") as _f:
        _f.write(_text)


def fixture(name):
    return os.path.join(FIXTURE_DIR, name)


def e2e_setup_test_utils_namespace():
    # TestUtils.setUpClass: the suite's own namespace.
    core.create_namespace(body=client.V1Namespace(metadata=client.V1ObjectMeta(name=E2E_NS)))


def e2e_node_apis():
    # test_client.py test_node_apis: every listed node reads back with a non-empty label dict. A
    # fresh server has no kubelet, so one node is registered first, as a kubelet would.
    core.create_node(client.V1Node(metadata=client.V1ObjectMeta(name="e2e-node", labels={"kubernetes.io/hostname": "e2e-node"})))
    items = core.list_node().items
    check(items, "nodes listed")
    for item in items:
        node = core.read_node(name=item.metadata.name)
        check(len(node.metadata.labels) > 0, "node labels")
        check(isinstance(node.metadata.labels, dict), "labels are a dict")
    core.delete_node("e2e-node")


def e2e_create_namespace_from_yaml():
    utils.create_from_yaml(api_client, fixture("core-namespace.yaml"))
    nmsp = core.read_namespace(name="development")
    check(nmsp is not None and nmsp.metadata.name == "development", "namespace from yaml")
    core.delete_namespace(name="development", body={})


def e2e_create_apiservice_from_yaml_with_conflict():
    utils.create_from_yaml(api_client, fixture("api-service.yaml"))
    reg_api = client.ApiregistrationV1Api(api_client)
    svc = reg_api.read_api_service(name="v1alpha1.wardle.k8s.io")
    check(svc is not None and svc.metadata.name == "v1alpha1.wardle.k8s.io", "apiservice read")
    check(svc.spec.group == "wardle.k8s.io" and svc.spec.version == "v1alpha1", "apiservice spec")
    try:
        utils.create_from_yaml(api_client, fixture("api-service.yaml"))
        raise AssertionError("second create succeeded")
    except utils.FailToCreateError as e:
        exp_error = (
            "Error from server (Conflict): "
            '{"kind":"Status","apiVersion":"v1","metadata":{},'
            '"status":"Failure",'
            '"message":"apiservices.apiregistration.k8s.io '
            '\\"v1alpha1.wardle.k8s.io\\" already exists",'
            '"reason":"AlreadyExists",'
            '"details":{"name":"v1alpha1.wardle.k8s.io",'
            '"group":"apiregistration.k8s.io","kind":"apiservices"},'
            '"code":409}\n'
        )
        check(str(e) == exp_error, "conflict error text:\n%r\nexpected\n%r" % (str(e), exp_error))
    finally:
        reg_api.delete_api_service(name="v1alpha1.wardle.k8s.io", body={})


def e2e_create_namespace_list_from_yaml():
    utils.create_from_yaml(api_client, fixture("namespace-list.yaml"))
    for name in ("mock-1", "mock-2"):
        nmsp = core.read_namespace(name=name)
        check(nmsp is not None and nmsp.metadata.name == name, "namespace %s" % name)
        check(nmsp.metadata.labels["name"] == name, "label of %s" % name)
    core.delete_namespace(name="mock-1", body={})
    core.delete_namespace(name="mock-2", body={})


def lease_with_value(name, value):
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": name, "labels": {"e2e-tests": "true"}}, "spec": {"holderIdentity": value}}


def e2e_watch_leases():
    # test_watch.py test_watch_configmaps, on Leases (ConfigMaps are not served): every change after
    # the list arrives on a watch from its resourceVersion, the two deletions in either order.
    coord = client.CoordinationV1Api(api_client)
    suffix = str(uuid.uuid4())[-12:]
    name_a, name_b = "lease-a-" + suffix, "lease-b-" + suffix
    coord.create_namespaced_lease(body=lease_with_value(name_a, "a"), namespace=E2E_NS)
    rv = coord.list_namespaced_lease(E2E_NS, label_selector="e2e-tests=true").metadata.resource_version
    lease_b = lease_with_value(name_b, "b")
    coord.create_namespaced_lease(body=lease_b, namespace=E2E_NS)
    lease_b["spec"]["holderIdentity"] = "{}"
    coord.patch_namespaced_lease(name=name_b, namespace=E2E_NS, body=lease_b)
    coord.delete_collection_namespaced_lease(namespace=E2E_NS, label_selector="e2e-tests=true")
    w = watch.Watch()
    expect = ["ADDED", "MODIFIED", "DELETED", "DELETED"]
    i = 0
    for event in w.stream(coord.list_namespaced_lease, namespace=E2E_NS, resource_version=rv, timeout_seconds=5, label_selector="e2e-tests=true"):
        check(event["type"] == expect[i], "event %d: %s" % (i, event["type"]))
        if i < 2:
            check(event["object"].metadata.name == name_b, "event %d names %s" % (i, event["object"].metadata.name))
        i += 1
    check(i == 4, "%d events" % i)


def e2e_teardown_test_utils_namespace():
    # TestUtils.tearDownClass.
    core.delete_namespace(name=E2E_NS)


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


E2E = (
    e2e_setup_test_utils_namespace,
    e2e_node_apis,
    e2e_create_namespace_from_yaml,
    e2e_create_apiservice_from_yaml_with_conflict,
    e2e_create_namespace_list_from_yaml,
    e2e_watch_leases,
    e2e_teardown_test_utils_namespace,
)

def self_review(conf_for):
    """The SelfSubjectReview's user, asked with a client of `conf_for`'s configuration (no admin certificate)."""
    c = client.Configuration()
    c.host = URL
    c.ssl_ca_cert = conf.ssl_ca_cert
    conf_for(c)
    api = client.ApiClient(c)
    body = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
    data, status, _ = api.call_api("/apis/authentication.k8s.io/v1/selfsubjectreviews", "POST", body=body, response_type="object",
                                   auth_settings=["BearerToken"], _return_http_data_only=False,
                                   header_params={"Content-Type": "application/json", "Accept": "application/json"})
    check(status == 201, "SelfSubjectReview: %s" % status)
    # And an ordinary typed call with the same credential.
    client.CoreV1Api(api).read_namespace("default")
    return data["status"]["userInfo"]


def identity_with_token():
    def bearer(c):
        c.api_key = {"authorization": "Bearer " + os.environ["SUITE_TOKEN"]}
    print("identity token %s" % json.dumps(self_review(bearer), sort_keys=True), flush=True)


def identity_with_certificate():
    def certificate(c):
        c.cert_file = os.environ["SUITE_CERT"]
        c.key_file = os.environ["SUITE_KEY"]
    print("identity certificate %s" % json.dumps(self_review(certificate), sort_keys=True), flush=True)


if PROFILE == "identity":
    for s in (identity_with_token, identity_with_certificate):
        scenario(s)
elif PROFILE == "kubernetes":
    for s in (typed_core, typed_leases, typed_watch_with_resume, dynamic_client, orch_raw_calls, cleanup):
        scenario(s)
    # The e2e cases do not depend on each other (only on the first and last), so one failing
    # does not hide the others.
    for s in E2E:
        scenario(s, keep_going=s not in (E2E[0], E2E[-1]))
else:
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=NS)))
    for s in (dynamic_client, orch_raw_calls, cleanup):
        scenario(s)
if FAILED:
    print("failed: %s" % ", ".join(FAILED), flush=True)
    sys.exit(1)
print("done", flush=True)
