project = 'x'
