import numpy as np

from pfresample.models import (
    BearingsOnlyModel,
    BimodalModel,
    GrowthModel,
    UuvModel,
    VolatilityModel,
)

rng = np.random.default_rng(3)
g = GrowthModel()
gt, gy = g.simulate(25, np.random.default_rng(1))
b = BimodalModel()
bt, by = b.simulate(20)
bot = BearingsOnlyModel()
_, boty = bot.simulate(15, np.random.default_rng(2))
u = UuvModel()
ut, uy = u.simulate(4)
uy = uy[:40]
v = VolatilityModel()
vx, vy = v.simulate(40, np.random.default_rng(5))
