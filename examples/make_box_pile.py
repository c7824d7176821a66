#!/usr/bin/env python3
"""Write box_pile.json: 100 boxes (10 cm, 0.5 kg) in four layers of 5 x 5 with random
orientations, dropped onto a fixed floor: the compliant-mode benchmark's many-body scene.
Run: python3 examples/make_box_pile.py > examples/box_pile.json"""
import json, math, random

random.seed(7)
bodies = [{"name": "floor", "fixed": True, "shape": {"box": {"size": [4, 4, 0.1]}},
           "pose": {"p": [0, 0, -0.05]}}]
for layer in range(4):
    for i in range(5):
        for j in range(5):
            # a random unit quaternion within 30 degrees of upright
            axis = [random.uniform(-1, 1) for _ in range(3)]
            n = math.sqrt(sum(a * a for a in axis)) or 1.0
            angle = math.radians(random.uniform(0, 30))
            q = [math.cos(angle / 2)] + [math.sin(angle / 2) * a / n for a in axis]
            bodies.append({
                "name": "box%d_%d_%d" % (layer, i, j), "mass": 0.5,
                "shape": {"box": {"size": [0.1, 0.1, 0.1]}},
                "pose": {"p": [-0.8 + 0.2 * i + random.uniform(-0.01, 0.01),
                               0.2 + 0.2 * j + random.uniform(-0.01, 0.01),
                               0.1 + 0.22 * layer],
                         "q": [round(x, 9) for x in q]}})
scene = {
    "description": "100 boxes (10 cm, 0.5 kg) with random orientations in four layers of 5 x 5, dropped onto a floor: a pile of hundreds of contacts. Stiff springs (1e7 N/m) stop a 3 m/s corner impact within the 1 mm standoff. Frictionless for now, so the pile spreads.",
    "gravity": [0, 0, -9.81],
    "contact": {"k": 1e7, "alpha": 0.5, "n": 1, "standoff": 0.001},
    "integrator": {"rtol": 1e-4, "atol": 1e-8},
    "bodies": bodies}
print(json.dumps(scene, indent=1))
