const { parse } = require("../lib/parse");
for (let i = 0; i < 1e6; i++) parse("x");
