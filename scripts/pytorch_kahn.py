#!/usr/bin/env python3
"""The order in which PyTorch's autograd engine runs the backward nodes of
five small graphs, for tests/it/listings.rs (`:topo kahn` must list the same
order).

PyTorch's engine counts each node's pending uses and keeps the nodes that are
ready in a priority queue (`ReadyQueue`, torch/csrc/autograd/engine.cpp)
that pops the highest sequence number first: the node created last. A leaf's
`AccumulateGrad` node has the highest sequence number of all (UINT64_MAX),
so a ready leaf comes first. First-in first-out gives another order on each
of these graphs; the script checks that, so every graph tells the two apart.

Each graph is written in the calculator's language, in statements that Python
evaluates too: `name = number` makes a leaf (a tensor that requires grad),
every other statement an op. The order is observed, not computed: a pre-hook
on every node of the graph records when the engine runs it. Constants have no
node in PyTorch.

Output (tests/data/pytorch_kahn.tsv): one line a graph, tab-separated: its
name, its statements (`; `-separated), PyTorch's order (names,
comma-separated), the first-in first-out order (names).

Run: pip install torch --index-url https://download.pytorch.org/whl/cpu
     python3 scripts/pytorch_kahn.py > tests/data/pytorch_kahn.tsv
"""

import collections
import re

import torch

GRAPHS = [
    ("colah", "a = 2; b = 1; c = a + b; d = b + 1; e = c*d"),
    ("neuron", "x1 = 2; x2 = 0; w1 = -3; w2 = 1; b = 6.8813735870195432; "
               "p1 = x1*w1; p2 = x2*w2; s = p1 + p2; n = s + b; o = tanh(n)"),
    ("fan_out", "x = 3; u = x*x; v = sin(x); p = u*v; q = exp(x); y = p + q"),
    ("shared", "x = 0.5; h = tanh(x); a = h*2; g = h + x; y = a*g"),
    ("two_paths", "x = 1; y = 2; m = x*y; s = m + y; t = sin(m); z = s*t"),
]

LEAF = re.compile(r"^(\w+) = (-?[0-9.]+)$")


def build(source):
    """The tensors of `source` by name, the output's name, and every backward
    node of the graph with its name."""
    env = {"tanh": torch.tanh, "sin": torch.sin, "exp": torch.exp}
    tensors = {}
    last = None
    for statement in source.split("; "):
        name, expr = statement.split(" = ")
        leaf = LEAF.match(statement)
        if leaf:
            tensors[name] = torch.tensor(float(expr), dtype=torch.float64, requires_grad=True)
        else:
            tensors[name] = eval(expr, env, dict(tensors))
        last = name
    node_names = {}
    for name, t in tensors.items():
        if t.grad_fn is not None:
            node_names[t.grad_fn] = name
    nodes, stack = [], [tensors[last].grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node in nodes:
            continue
        nodes.append(node)
        if hasattr(node, "variable"):
            node_names[node] = next(n for n, t in tensors.items() if t is node.variable)
        stack.extend(next_node for next_node, _ in node.next_functions)
    return tensors[last], nodes, node_names


def torch_order(source):
    output, nodes, names = build(source)
    ran = []
    for node in nodes:
        node.register_prehook(lambda grads, node=node: ran.append(names[node]))
    output.backward()
    return ran


def fifo_order(source):
    output, nodes, names = build(source)
    pending = collections.Counter()
    for node in nodes:
        for next_node, _ in node.next_functions:
            if next_node is not None:
                pending[next_node] += 1
    ready, order = collections.deque([output.grad_fn]), []
    while ready:
        node = ready.popleft()
        order.append(names[node])
        for next_node, _ in node.next_functions:
            if next_node is None:
                continue
            pending[next_node] -= 1
            if pending[next_node] == 0:
                ready.append(next_node)
    return order


for name, source in GRAPHS:
    ran, fifo = torch_order(source), fifo_order(source)
    assert ran != fifo, name
    print("\t".join([name, source, ",".join(ran), ",".join(fifo)]))
