test('app', () => {})
