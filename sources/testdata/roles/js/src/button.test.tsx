test('renders', () => {})
