export default { title: 'Button' }
