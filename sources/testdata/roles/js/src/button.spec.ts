describe('button', () => {})
