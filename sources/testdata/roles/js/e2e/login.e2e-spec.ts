it('logs in', () => {})
